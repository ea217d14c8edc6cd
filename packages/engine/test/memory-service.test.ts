// The memory service without any transport: an Engine opened directly (real embedded database, real model), its
// answers in engine terms (camelCase, Dates), catalogue problems for what is wrong, and plugins whose retain hooks
// run in the order the engine is given them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Problem } from '@mnemos/problems';
import { Engine, ENGINE_PLUGINS, loadEngineConfig, type EnginePlugin, type RecallQuery } from '../src/index.js';
import { tempHome, testEnv } from './helpers/engine.js';

const home = tempHome('mnemos-service-');
const seen: string[] = [];
/** Records each retain hook call, so the test sees the order the engine runs plugins' hooks in. */
const recorder = (name: string): EnginePlugin => ({
  name,
  install: () => ({
    hooks: {
      afterRetain: async (_tx, _partition, ids) => {
        seen.push(`${name}:${ids.length}`);
      },
    },
    close: async () => undefined,
  }),
});
let engine: Engine;

before(async () => {
  const config = loadEngineConfig(testEnv(home.path));
  const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
  engine = await Engine.open(config, silent, undefined, [...ENGINE_PLUGINS, recorder('first'), recorder('second')]);
});

after(async () => {
  await engine.close();
  home.remove();
});

const partition = { tenant: 'default', bankId: 'svc', space: 'default' };
const item = (content: string, timestamp?: Date) => ({
  content,
  timestamp,
  context: undefined,
  metadata: undefined,
  tags: ['t'],
  documentId: undefined,
  entities: undefined,
});
const query = (text: string): RecallQuery => ({
  tenant: 'default',
  bankId: 'svc',
  space: 'default',
  query: text,
  maxTokens: 4096,
  budget: 'mid',
  includeOrg: false,
  types: undefined,
  tags: undefined,
  tagsMatch: 'any',
  queryTimestamp: new Date(),
  trace: false,
});

describe('MemoryService', () => {
  it('retains and recalls in engine terms, with ISO timestamps', async () => {
    const when = new Date('2024-03-01T10:00:00Z');
    const items = [item('Alice keeps two cats named Miso and Tofu.', when)];
    const retained = await engine.service.retain({ partition, items, async: false, maxNewMemories: undefined });
    assert.equal(retained.async, false);
    assert.ok(!retained.async && retained.storedCount === 1 && retained.memoryIds.length === 1);
    const recalled = await engine.service.recall(query('What pets does Alice have?'));
    const top = recalled.hits[0]!;
    assert.equal(top.memory.text, 'Alice keeps two cats named Miso and Tofu.');
    assert.equal(top.memory.bankId, 'svc');
    assert.equal(top.memory.occurredAt, when.toISOString());
    assert.equal(top.memory.createdAt, new Date(top.memory.createdAt).toISOString());
    assert.ok(top.score > 0);
  });

  it("runs the plugins' retain hooks in the declared order, in the retain", () => {
    assert.deepEqual(seen, ['first:1', 'second:1']);
    assert.deepEqual(engine.features, ['async-retain', 'first', 'second']);
  });

  it('edits, reads and deletes a memory; a missing one is a catalogue problem', async () => {
    const [memory] = (
      await engine.service.listMemories({
        tenant: 'default',
        bankId: 'svc',
        space: undefined,
        type: undefined,
        text: undefined,
        tags: undefined,
        since: undefined,
        until: undefined,
        documentId: undefined,
        state: undefined,
        limit: 10,
        offset: 0,
        cursor: undefined,
      })
    ).items;
    const edited = await engine.service.editMemory('default', 'svc', memory!.id, { tags: ['pets'] });
    assert.deepEqual(edited.tags, ['pets']);
    assert.deepEqual((await engine.service.getMemory('default', 'svc', memory!.id)).tags, ['pets']);
    assert.equal(await engine.service.deleteMemory('default', 'svc', memory!.id), 1);
    await assert.rejects(
      engine.service.getMemory('default', 'svc', memory!.id),
      (error: unknown) => error instanceof Problem && error.code === 'memory_not_found' && error.status === 404,
    );
  });

  it('answers reflect without an LLM with 503 llm_not_configured, and an unknown operation with 404', async () => {
    await assert.rejects(
      engine.service.reflect({
        tenant: 'default',
        bankId: 'svc',
        space: undefined,
        query: 'pets?',
        context: undefined,
        budget: 'low',
        types: undefined,
        tags: undefined,
        tagsMatch: undefined,
        queryTimestamp: undefined,
        responseSchema: undefined,
        includeFacts: false,
      }),
      (error: unknown) => error instanceof Problem && error.code === 'llm_not_configured' && error.status === 503,
    );
    await assert.rejects(
      engine.service.operation('default', '00000000-0000-4000-8000-000000000000'),
      (error: unknown) => error instanceof Problem && error.code === 'operation_not_found',
    );
  });

  it('keeps bank profiles in engine terms', async () => {
    const bank = await engine.service.putBank('default', 'svc', { mission: 'Remember Alice.' });
    assert.equal(bank.mission, 'Remember Alice.');
    assert.ok(bank.createdAt instanceof Date);
    assert.equal((await engine.service.bankStats('default', 'svc')).bankId, 'svc');
    await assert.rejects(
      engine.service.patchBank('default', 'nobody', {}),
      (error: unknown) => error instanceof Problem && error.code === 'bank_not_found',
    );
  });
});
