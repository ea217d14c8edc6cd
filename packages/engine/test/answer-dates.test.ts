import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rowToMemory, type MemoryRow } from '../src/memory/rows.js';
import { recalledAnswer } from '../src/wire/answers.js';
import type { RecallHit } from '../src/recall/types.js';

const row = (id: string, at: Date | string | null): MemoryRow => ({
  id,
  bank_id: 'b',
  space: 'default',
  type: 'raw',
  text: id,
  context: null,
  metadata: null,
  body_enc: null,
  tags: [],
  entities: [],
  document_id: null,
  source_id: null,
  occurred_at: at,
  created_at: new Date('2024-02-29T23:59:59.999Z'),
  // A bank index reads rows as JSON, where Postgres writes its own text for a timestamptz.
  updated_at: '2024-03-01T01:00:00.5+01:00',
  state: 'valid',
  superseded_by: null,
  valid_from: new Date('2024-02-29T23:59:59.999Z'),
  valid_to: null,
  expires_at: null,
});

const hit = (r: MemoryRow): RecallHit => ({
  memory: rowToMemory(r),
  score: 0.5,
  scores: { semantic: 0.5 },
  relevance: 0.4,
  truncated: false,
  org: false,
});

describe('memory dates on the way out', () => {
  it('reads a row once into the ISO text toISOString writes, whichever form the driver gave', () => {
    const memory = rowToMemory(row('m1', '2023-05-08T13:56:00+00:00'));
    assert.equal(memory.occurredAt, '2023-05-08T13:56:00.000Z');
    assert.equal(memory.createdAt, '2024-02-29T23:59:59.999Z');
    assert.equal(memory.updatedAt, '2024-03-01T00:00:00.500Z');
    assert.equal(memory.validTo, null);
    assert.equal(rowToMemory(row('m2', new Date(0))).occurredAt, '1970-01-01T00:00:00.000Z');
  });

  it('answers a memory recalled twice with the same fields both times', () => {
    const stored = row('m1', '2023-05-08T13:56:00.000Z');
    const first = recalledAnswer(hit(stored));
    const again = recalledAnswer(hit(stored));
    assert.deepEqual(again, first);
    assert.equal(first.created_at, '2024-02-29T23:59:59.999Z');
    assert.equal(first.updated_at, '2024-03-01T00:00:00.500Z');
    assert.equal(first.occurred_at, '2023-05-08T13:56:00.000Z');
    assert.equal(first.mentioned_at, '2023-05-08T13:56:00.000Z');
    const undated = recalledAnswer(hit(row('m2', null)));
    assert.equal(undated.occurred_at, null);
    assert.equal('mentioned_at' in undated, false);
  });
});
