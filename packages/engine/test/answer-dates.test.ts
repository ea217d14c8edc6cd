import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { storedDate } from '../src/service/stored-dates.js';
import { isoText } from '../src/wire/iso-dates.js';
import { recalledAnswer } from '../src/wire/answers.js';
import { toRecalledMemory } from '../src/service/memory-model.js';
import type { RecallHit } from '../src/recall/types.js';
import { indexRow } from './helpers/index-row.js';

const hit = (id: string, at: string | null): RecallHit => ({
  ...indexRow(id, 1).memory,
  occurred_at: at,
  created_at: '2024-02-29T23:59:59.999Z',
  updated_at: '2024-03-01T00:00:00.000Z',
  score: 0.5,
  scores: { semantic: 0.5 },
  relevance: 0.4,
});

describe('memory dates on the way out', () => {
  it('parses a stored timestamp once and writes each date as toISOString does', () => {
    const text = '2023-05-08T13:56:00.000Z';
    const a = storedDate(text);
    assert.equal(a.getTime(), Date.parse(text));
    assert.equal(storedDate(text), a, 'the same text gives the same Date');
    for (const date of [a, new Date(0), new Date('1999-12-31T23:59:59.123Z'), new Date(8.64e15)]) {
      assert.equal(isoText(date), date.toISOString());
      assert.equal(isoText(date), date.toISOString(), 'asked again');
    }
    assert.throws(() => isoText(new Date(Number.NaN)), RangeError, 'an invalid date fails as toISOString does');
  });

  it('answers a memory recalled twice with the same fields both times', () => {
    const first = recalledAnswer(toRecalledMemory(hit('m1', '2023-05-08T13:56:00.000Z')));
    const again = recalledAnswer(toRecalledMemory(hit('m1', '2023-05-08T13:56:00.000Z')));
    assert.deepEqual(again, first);
    assert.equal(first.created_at, '2024-02-29T23:59:59.999Z');
    assert.equal(first.updated_at, '2024-03-01T00:00:00.000Z');
    assert.equal(first.occurred_at, '2023-05-08T13:56:00.000Z');
    assert.equal(first.mentioned_at, '2023-05-08T13:56:00.000Z');
    const undated = recalledAnswer(toRecalledMemory(hit('m2', null)));
    assert.equal(undated.occurred_at, null);
    assert.equal('mentioned_at' in undated, false);
  });
});
