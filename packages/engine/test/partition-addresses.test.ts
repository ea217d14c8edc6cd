import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { moveBankToPartition } from '../src/db/bank-partition.js';
import { PostgresBankIndex } from '../src/vectors/storage/postgres-index.js';
import { presentedAs } from './helpers/as-server.js';
import { startTestEngine, type TestEngine } from './helpers/engine.js';
import { items, rowFilter } from './helpers/recall-facts.js';

/**
 * A row address (ctid) names a row within its partition only: once a bank's memories live in a partition of their
 * own, another bank's rows sit at the same addresses in the shared partition. Recall's reads by address (the
 * candidates at the addresses the compact copy keeps, the hits read again, the vectors beside the rows) answer the
 * row asked for, never the one at the same address in another partition.
 */

const TEXTS = [
  'Mara moved to Lisbon in March to start a job at a bakery.',
  'The bakery opens at six; Mara bakes before the customers arrive.',
  'Mara adopted a grey cat called Figo.',
  'Figo sleeps on the flour sacks in the storeroom.',
];

describe('reads by address, with a bank in a partition of its own', () => {
  let engine: TestEngine;
  const ids: Record<'shared' | 'own', string[]> = { shared: [], own: [] };

  before(async () => {
    engine = await startTestEngine();
    for (const bank of ['shared', 'own'] as const) {
      const outcome = await engine.engine.service.retain({
        partition: { tenant: 'default', bankId: bank, space: 'default' },
        items: items(TEXTS),
        async: false,
        maxNewMemories: undefined,
      });
      ids[bank] = outcome.async ? [] : outcome.memoryIds;
    }
    // The bank moved as a large bank is on a server: a partition of its own, its rows moved into it.
    const part = await moveBankToPartition(engine.engine.db, 'default', 'own');
    assert.equal(part, 1);
  });
  after(async () => {
    await engine?.dispose();
  });

  for (const kind of ['embedded', 'external'] as const) {
    it(`answers the rows asked for, with their own vectors (${kind} form)`, async () => {
      const { db, store, embedder } = engine.engine;
      const addresses = new Map(
        (
          await db.query<{ id: string; address: string; partition: string }>(
            `SELECT id, ctid::text AS address, tableoid::regclass::text AS partition FROM memories`,
          )
        ).map((r) => [r.id, r] as const),
      );
      const shared = ids.shared.map((id) => addresses.get(id)!);
      const own = ids.own.map((id) => addresses.get(id)!);
      assert.ok(
        own.every((r) => r.partition === 'memories_bank_1') && shared.every((r) => r.partition === 'memories_shared'),
      );
      const clashing = shared.filter((r) => own.some((o) => o.address === r.address));
      assert.ok(clashing.length > 0, 'rows of both banks share addresses');

      const search = new PostgresBankIndex(presentedAs(db, kind), store);
      const scope = { tenant: 'default', bankIds: ['shared'] };
      const [query] = await embedder.embed(['Where does Mara work?'], 'query');
      const stored = new Map(
        (
          await db.query<{ id: string; embedding: string }>(
            `SELECT id, embedding::text AS embedding FROM memories WHERE bank_id = 'shared'`,
          )
        ).map((r) => [r.id, Float32Array.from(r.embedding.slice(1, -1).split(','), Number)] as const),
      );
      const asked = ids.shared.map((id) => addresses.get(id)!.address);

      const nearest = await search.nearestAround(scope, rowFilter(), ids.shared, query!, 4, 0, true, asked);
      assert.deepEqual(nearest.hits.map((h) => h.meta.id).sort(), [...ids.shared].sort());
      for (const hit of nearest.hits) assert.deepEqual(hit.vector, stored.get(hit.meta.id), hit.meta.id);

      const read = await search.rows(scope, ids.shared, query!, true);
      assert.deepEqual(read.map((r) => r.meta.id).sort(), [...ids.shared].sort());
      for (const row of read) assert.deepEqual(row.vector, stored.get(row.meta.id), row.meta.id);
    });
  }
});
