// Kept plans on an external database: recall's pooled reads are prepared once per connection and run again by name,
// a bounded number of texts is kept, and connections that share one server session (as PGlite served over the wire
// shares its one session, or a transaction-mode pooler hands statements to any session) answer every statement.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { plaintextCodec } from '../src/crypto/codec.js';
import type { Database } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { openExternalDatabase } from '../src/db/postgres.js';
import { MemoryStore } from '../src/memory/store.js';
import { PostgresBankIndex } from '../src/vectors/storage/postgres-index.js';
import { memoryPglite } from './helpers/memory-pglite.js';
import { rowFilter } from './helpers/recall-facts.js';
import { serveOverTheWire, type WirePostgres } from './helpers/wire-postgres.js';

let pglite: PGlite;
let wire: WirePostgres;
const opened: Database[] = [];

async function open(poolSize: number): Promise<Database> {
  const db = await openExternalDatabase(wire.url, { poolSize, statementTimeoutMs: 0 });
  opened.push(db);
  return db;
}

/** The statements prepared on the server session, with how many times each ran. */
async function prepared(db: Database): Promise<Array<{ statement: string; runs: number }>> {
  return db.query(`SELECT statement, (generic_plans + custom_plans)::int AS runs FROM pg_prepared_statements`);
}

before(async () => {
  pglite = await memoryPglite({ extensions: { vector } });
  wire = await serveOverTheWire(pglite, 8);
});

after(async () => {
  await Promise.all(opened.map((db) => db.close()));
  await wire?.stop();
  await pglite?.close();
});

describe('kept plans', () => {
  it('a pooled read run again reuses the statement prepared the first time, though its instant changes', async () => {
    const db = await open(1);
    await migrate(db);
    await db.exec('ALTER TABLE memories ADD COLUMN embedding vector(3)');
    const ids = [randomUUID(), randomUUID()];
    for (const [seq, id] of ids.entries()) {
      await db.query(
        `INSERT INTO memories (id, tenant, bank_id, space, type, text, content_hash, fts, embedding, batch_id, seq)
         VALUES ($1, 'default', 'main', 'default', 'raw', $2, $3, to_tsvector('english', $2), $4, $5, $6)`,
        [id, `memory ${seq}`, randomUUID(), seq === 0 ? '[1,0,0]' : '[0,1,0]', ids[0]!, seq],
      );
    }
    const index = new PostgresBankIndex(db, new MemoryStore(db, plaintextCodec));
    for (let call = 0; call < 7; call++) {
      // Each read is judged at its own instant (the filter's `now`), which must not make a new statement.
      const around = await index.rowsAround(
        { tenant: 'default', bankIds: ['main'] },
        rowFilter(),
        [ids[0]!],
        Float32Array.of(1, 0, 0),
        1,
      );
      assert.deepEqual(
        around.hits.map((h) => h.meta.id),
        [ids[0]],
      );
      assert.deepEqual(
        around.neighbours.map((n) => n.meta.id),
        [ids[1]],
      );
    }
    const reads = (await prepared(db)).filter((p) => p.statement.includes(' AS cosine'));
    assert.equal(reads.length, 1, `${reads.length} pooled-read statements prepared`);
    assert.equal(reads[0]!.runs, 7);
  });

  it('keeps a bounded number of texts; the rest are planned at each call', async () => {
    const db = await open(1);
    for (let i = 0; i < 80; i++) {
      const [row] = await db.query<{ n: number }>(`SELECT $1::int + ${i} AS n`, [1], { keepPlan: true });
      assert.equal(row!.n, 1 + i);
    }
    const sums = (await prepared(db)).filter((p) => p.statement.startsWith('SELECT $1::int +'));
    assert.ok(sums.length > 0 && sums.length <= 64, `${sums.length} texts prepared`);
  });

  it('answers every statement when its connections share one server session, and stops keeping plans', async () => {
    const db = await open(4);
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        [1, 2, 3, 4].map((n) => db.query<{ n: number }>('SELECT $1::int * 2 AS n', [n], { keepPlan: true })),
      );
      assert.deepEqual(
        answers.map(([row]) => row!.n),
        [2, 4, 6, 8],
      );
    }
  });
});
