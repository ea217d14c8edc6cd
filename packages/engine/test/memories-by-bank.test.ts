import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { migrations } from '../src/db/migrations/index.js';
import { openExternalDatabase } from '../src/db/postgres.js';
import { createScratchDatabase, type ScratchDatabase } from './helpers/postgres-server.js';

/**
 * Migration 018 partitions memories by bank on a server that holds memories already: the rows stay where they are (the
 * table becomes the shared partition), and the key indexes an operator built beforehand without blocking writes are
 * adopted, not built again. Migration 019 then makes the shared partition's other indexes the table's, which a bank's
 * own partition gets, without building them.
 */

const MEMORIES_BY_BANK = 18;
/** The migration that makes the shared partition's indexes the table's. */
const BANK_PARTITIONS = 19;

describe('memories partitioned by bank, on a server that held memories before', () => {
  let scratch: ScratchDatabase;
  let db: Database;

  before(async () => {
    scratch = await createScratchDatabase('mnemos_by_bank');
    db = await openExternalDatabase(scratch.url, { poolSize: 2, statementTimeoutMs: 0 });
  });
  after(async () => {
    await db?.close();
    await scratch?.drop();
  });

  it('keeps every row in place and adopts the key indexes built beforehand', async () => {
    await migrate(
      db,
      migrations.filter((m) => m.version < MEMORIES_BY_BANK),
    );
    const source = randomUUID();
    await db.query(
      `INSERT INTO memories (id, tenant, bank_id, space, type, text, content_hash, fts, source_id)
       VALUES ($1, 'default', 'notes', 'default', 'raw', 'Mara lives in Lisbon.', 'a', to_tsvector('Lisbon'), NULL),
              ($2, 'default', 'notes', 'default', 'world', 'Mara is in Portugal.', 'b', to_tsvector('Portugal'), $1)`,
      [source, randomUUID()],
    );
    const [{ page } = { page: '' }] = await db.query<{ page: string }>(
      `SELECT ctid::text AS page FROM memories WHERE id = $1`,
      [source],
    );
    // What an operator runs first on a large table (docs/deploy.md): the column, then the indexes, concurrently.
    await db.query('ALTER TABLE memories ADD COLUMN part integer NOT NULL DEFAULT 0');
    await db.query('CREATE UNIQUE INDEX CONCURRENTLY memories_shared_key ON memories (tenant, id, part)');
    await db.query(
      `CREATE UNIQUE INDEX CONCURRENTLY memories_shared_dedupe ON memories (tenant, bank_id, space, content_hash, part)
       WHERE source_id IS NULL`,
    );
    const built = await db.query<{ oid: number }>(
      `SELECT oid::int FROM pg_class WHERE relname IN ('memories_shared_key', 'memories_shared_dedupe') ORDER BY relname`,
    );

    assert.deepEqual(
      await migrate(
        db,
        migrations.filter((m) => m.version <= MEMORIES_BY_BANK),
      ),
      [MEMORIES_BY_BANK],
    );

    const partitions = await db.query<{ name: string; isleaf: boolean }>(
      `SELECT relid::text AS name, isleaf FROM pg_partition_tree('memories') ORDER BY level`,
    );
    assert.deepEqual(partitions, [
      { name: 'memories', isleaf: false },
      { name: 'memories_shared', isleaf: true },
    ]);
    const [kept] = await db.query<{ page: string; partition: string }>(
      `SELECT ctid::text AS page, tableoid::regclass::text AS partition FROM memories WHERE id = $1`,
      [source],
    );
    assert.deepEqual(kept, { page, partition: 'memories_shared' }, 'the row was not copied');
    const adopted = await db.query<{ oid: number }>(
      `SELECT i.indexrelid::int AS oid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
       WHERE i.indrelid = 'memories_shared'::regclass AND (i.indisprimary OR c.relname = 'memories_shared_dedupe')
       ORDER BY c.relname`,
    );
    assert.deepEqual(adopted, built, 'the key and the dedupe index are the ones built beforehand');

    // Migration 019: the shared partition's other indexes become the table's, attached as they are (not built again).
    const sharedIndexes = async (): Promise<Array<{ oid: number; name: string; parent: string | null }>> =>
      db.query(
        `SELECT c.oid::int, c.relname AS name, p.relname AS parent FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
         LEFT JOIN pg_inherits h ON h.inhrelid = c.oid LEFT JOIN pg_class p ON p.oid = h.inhparent
         WHERE i.indrelid = 'memories_shared'::regclass AND c.relname NOT IN ('memories_tenant_id')
         ORDER BY c.oid`,
      );
    const beforeAttach = await sharedIndexes();
    assert.ok(beforeAttach.some((i) => i.name === 'memories_fts' && i.parent === null));
    assert.deepEqual(await migrate(db), [BANK_PARTITIONS]);
    assert.deepEqual(
      await sharedIndexes(),
      beforeAttach.map((i) =>
        i.parent === null ? { oid: i.oid, name: i.name.replace(/^memories_/, 'memories_shared_'), parent: i.name } : i,
      ),
      'each index is the same one, renamed, under an index of the table that has its name',
    );
    // And the partition number has planner statistics (recall names it), one value for the whole shared partition.
    const [stats] = await db.query<{ values: string }>(
      `SELECT most_common_vals::text AS values FROM pg_stats WHERE tablename = 'memories_shared' AND attname = 'part'`,
    );
    assert.equal(stats?.values, '{0}');
    // The derived fact still goes with its source.
    await db.query('DELETE FROM memories WHERE id = $1', [source]);
    const [left] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM memories');
    assert.equal(left?.n, 0);
  });
});
