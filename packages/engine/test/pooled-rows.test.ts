import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../src/db/database.js';
import { PostgresBankIndex, type PooledRow } from '../src/vectors/storage/postgres-index.js';
import { presentedAs } from './helpers/as-server.js';
import { startTestEngine, type TestEngine } from './helpers/engine.js';
import { createScratchDatabase, type ScratchDatabase } from './helpers/postgres-server.js';
import { items } from './helpers/recall-facts.js';

/**
 * Recall's pooled reads come from a server as plain fields and from the embedded database as one JSON text: the two
 * forms of one read give the same rows, every column of the memory included, in the clear and under encryption.
 */

const TEXTS = [
  'Mara moved to Lisbon in March to start a job at a bakery on Rua Augusta.',
  'The bakery opens at six and Mara bakes pastel de nata before the first customers arrive.',
  'Mara adopted a grey cat called Figo; he sleeps on the flour sacks.',
];

for (const [label, env] of [
  ['in the clear', {}],
  ['under encryption at rest', { MNEMOS_API_ENCRYPTION_MASTER_KEY: Buffer.alloc(32, 9).toString('base64') }],
] as const) {
  describe(`pooled reads from a server, ${label}`, () => {
    let scratch: ScratchDatabase;
    let engine: TestEngine;
    let ids: string[] = [];

    before(async () => {
      scratch = await createScratchDatabase('mnemos_pooled');
      engine = await startTestEngine({ ...env, MNEMOS_API_DATABASE_URL: scratch.url });
      const [first, second, third] = items(TEXTS, ['lisbon']);
      const outcome = await engine.engine.service.retain({
        partition: { tenant: 'default', bankId: 'pooled', space: 'default' },
        items: [
          {
            ...first!,
            timestamp: new Date('2025-03-14T09:26:53.589Z'),
            context: 'a letter home',
            metadata: { city: 'Lisbon', moved: { month: 3, certain: true }, tags: ['a "quoted" word', 'ç'] },
            documentId: 'letters-1',
            entities: ['Mara', 'Lisbon'],
            expiresAt: new Date('2999-01-01T00:00:00.001Z'),
          },
          { ...second!, timestamp: null, tags: ['lisbon', 'work'] },
          { ...third!, timestamp: undefined, metadata: { line: 'tab\there, newline\nthere, backslash \\' } },
        ],
        async: false,
        maxNewMemories: undefined,
      });
      assert.equal(outcome.async, false);
      ids = outcome.async ? [] : outcome.memoryIds;
      assert.equal(ids.length, 3);
    });
    after(async () => {
      await engine?.dispose();
      await scratch?.drop();
    });

    it('gives the same rows as plain fields as the JSON form gives, vectors and every column of the memory', async () => {
      const { db, store, embedder } = engine.engine;
      assert.equal(db.kind, 'external');
      const scope = { tenant: 'default', bankIds: ['pooled'] };
      const [query] = await embedder.embed(['Where does Mara work?'], 'query');
      const read = (on: Database): Promise<PooledRow[]> =>
        new PostgresBankIndex(on, store).rows(scope, ids, query!, true);
      const [fields, json] = await Promise.all([read(db), read(presentedAs(db, 'embedded'))]);
      assert.equal(fields.length, 3);
      assert.deepEqual(fields, json);
      const byId = new Map(fields.map((r) => [r.meta.id, r]));
      const first = byId.get(ids[0]!)!;
      assert.equal(first.meta.memory.text, TEXTS[0]);
      assert.equal(first.meta.memory.occurredAt, '2025-03-14T09:26:53.589Z');
      assert.equal(first.meta.memory.expiresAt, '2999-01-01T00:00:00.001Z');
      assert.deepEqual(first.meta.memory.metadata, {
        city: 'Lisbon',
        moved: { month: 3, certain: true },
        tags: ['a "quoted" word', 'ç'],
      });
      assert.equal(first.vector?.length, 384);
      // Under encryption the terms are the blind index's tokens: the same count of them.
      assert.equal(first.keywords.terms().size > 5, true, 'the keyword-index terms came with the row');
      assert.equal(byId.get(ids[1]!)!.meta.occurredAt, null);
      assert.deepEqual(byId.get(ids[1]!)!.meta.tags, ['lisbon', 'work']);
    });
  });
}
