import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../src/db/database.js';
import { ensureEmbeddingSchema } from '../src/db/embedding-schema.js';
import { migrate } from '../src/db/migrate.js';
import { SHARED_INDEX_NAME } from '../src/db/migrations/012_shared_recall_index.js';
import { openExternalDatabase } from '../src/db/postgres.js';
import { BankIndexes, bankIndexState, ensureBankIndex, sharedIndexState } from '../src/db/recall-index.js';
import { vectorLiteral } from '../src/memory/vector-literal.js';
import { PostgresBankIndex } from '../src/vectors/storage/postgres-index.js';
import { CURRENT_DEFAULT_SPACE } from '../bench/row-filters.js';
import { indexPlanScans } from './helpers/explain.js';
import { createScratchDatabase, type ScratchDatabase } from './helpers/postgres-server.js';

/**
 * On a PostgreSQL server the Postgres tier searches every bank through one HNSW index, built once, with the bank as
 * the scan's filter: no index build per bank, so no build reads another bank's rows.
 */

const DIMENSION = 8;
const ROWS_PER_BANK = 200;

let scratch: ScratchDatabase;
let db: Database;

function vector(seed: number): number[] {
  return Array.from({ length: DIMENSION }, (_, i) => Math.sin(seed * 12.9898 + i * 78.233));
}

async function fill(bankId: string, from: number): Promise<void> {
  await db.query(
    `INSERT INTO memories (id, tenant, bank_id, space, type, text, fts, content_hash, embedding)
     SELECT gen_random_uuid(), 'acme', $1, 'default', 'world', 'memory ' || g, to_tsvector('english', 'memory ' || g),
            md5($1 || g), v::vector
     FROM unnest($2::int[], $3::text[]) AS x(g, v)`,
    [
      bankId,
      Array.from({ length: ROWS_PER_BANK }, (_, i) => from + i),
      Array.from({ length: ROWS_PER_BANK }, (_, i) => vectorLiteral(vector(from + i))),
    ],
  );
}

before(async () => {
  scratch = await createScratchDatabase('shared_index');
  db = await openExternalDatabase(scratch.url, { poolSize: 4, statementTimeoutMs: 0 });
  await migrate(db);
  await ensureEmbeddingSchema(db, 'test:vectors', DIMENSION);
  await fill('alpha', 0);
  await fill('beta', 10_000);
});
after(async () => {
  await db?.close();
  await scratch?.drop();
});

describe('the Postgres tier on a server', () => {
  it('builds one vector index for every bank, once: a second bank gets no build of its own', async () => {
    const started: string[] = [];
    const indexes = new BankIndexes(db, { building: (_tenant, bankId) => started.push(bankId) });
    indexes.request('acme', 'alpha');
    await indexes.built('acme', 'alpha');
    indexes.request('acme', 'beta');
    await indexes.built('acme', 'beta');
    assert.equal(await sharedIndexState(db), 'valid');
    assert.deepEqual(started, ['alpha'], 'one build, for the first bank searched');
    assert.equal(await bankIndexState(db, 'acme', 'alpha'), 'none');
    assert.equal(await bankIndexState(db, 'acme', 'beta'), 'none');
  });

  it('answers a bank from the shared index with the bank as the filter, never another bank`s rows', async () => {
    const query = vector(10_005);
    const text = await indexPlanScans(
      db,
      `SELECT m.id FROM memories m WHERE m.tenant = $1 AND m.bank_id = $2 AND m.embedding IS NOT NULL
       AND m.space = 'default' ORDER BY m.embedding <=> $3::vector LIMIT 10`,
      ['acme', 'alpha', vectorLiteral(query)],
    );
    assert.match(text, new RegExp(`Index Scan using ${SHARED_INDEX_NAME} on memories`));
    assert.match(text, /Filter: .*bank_id = 'alpha'/);

    // The query lies in beta's part of the space; alpha's search answers alpha's memories only.
    const search = new PostgresBankIndex(db, { open: () => Promise.resolve([]) });
    const hits = await search.nearest(
      { tenant: 'acme', bankIds: ['alpha'] },
      CURRENT_DEFAULT_SPACE,
      Float32Array.from(query),
      10,
    );
    assert.equal(hits.length, 10);
    const banks = await db.query<{ bank_id: string }>(
      'SELECT DISTINCT bank_id FROM memories WHERE tenant = $1 AND id = ANY($2::uuid[])',
      ['acme', hits.map((h) => h.id)],
    );
    assert.deepEqual(
      banks.map((b) => b.bank_id),
      ['alpha'],
    );
  });

  it('drops the per-bank indexes an earlier version built, once the shared index answers', async () => {
    await ensureBankIndex(db, 'acme', 'beta');
    assert.equal(await bankIndexState(db, 'acme', 'beta'), 'valid');
    const indexes = new BankIndexes(db);
    indexes.request('acme', 'beta');
    await indexes.built('acme', 'beta');
    assert.equal(await bankIndexState(db, 'acme', 'beta'), 'none');
    assert.equal(await sharedIndexState(db), 'valid');
  });
});
