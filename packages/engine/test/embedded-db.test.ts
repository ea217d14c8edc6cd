// test-runner: long (started first, so the suite does not wait for it at the end)
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { EMBEDDED_SETTINGS, openEmbeddedDatabase } from '../src/db/pglite.js';
import { refreshStatistics } from '../src/db/embedded-statistics.js';
import { call, startTestEngine, tempHome } from './helpers/engine.js';

/** The embedded database: created on first open (initdb in a child process), reopened as is, with its memory settings. */
describe('embedded database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mnemos-embedded-db-'));
  // The tests after the first are not about creating a folder: theirs is a copy of initdb's (see pristine-database.ts).
  const thread = tempHome('mnemos-embedded-db-thread-', { database: 'initdb' });
  const stats = tempHome('mnemos-embedded-db-stats-', { database: 'initdb' });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
    thread.remove();
    stats.remove();
  });

  it('creates a new data folder, keeps what was written, and runs with the memory settings', async () => {
    const dataDir = join(dir, 'db');
    const first = await openEmbeddedDatabase(dataDir);
    try {
      assert.ok(existsSync(join(dataDir, 'PG_VERSION')), 'the data folder is a Postgres cluster');
      await first.exec('CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)');
    } finally {
      await first.close();
    }
    const again = await openEmbeddedDatabase(dataDir);
    try {
      assert.deepEqual(await again.query('SELECT n FROM kept'), [{ n: 42 }]);
      for (const [name, value] of Object.entries(EMBEDDED_SETTINGS)) {
        const [row] = await again.query<Record<string, string>>(`SHOW ${name}`);
        assert.equal(row?.[name], value, name);
      }
      // pgvector still loads (the child created the cluster without extensions).
      await again.exec('CREATE EXTENSION IF NOT EXISTS vector');
      assert.deepEqual(await again.query(`SELECT '[1,2]'::vector(2)::text AS v`), [{ v: '[1,2]' }]);
    } finally {
      await again.close();
    }
  });
  it('runs on its own thread: errors keep their Postgres fields, a failed transaction leaves nothing, a closed one refuses', async () => {
    const db = await openEmbeddedDatabase(join(thread.path, 'db'));
    try {
      await db.exec('CREATE TABLE items (n int PRIMARY KEY, blob bytea, at timestamptz)');
      const at = new Date('2026-01-02T03:04:05.000Z');
      await db.query('INSERT INTO items VALUES ($1, $2, $3)', [1, Buffer.from([0, 255, 7]), at]);
      // Values cross the thread intact: bytes, dates, numbers.
      const [row] = await db.query<{ n: number; blob: Uint8Array; at: Date }>('SELECT n, blob, at FROM items');
      assert.equal(row?.n, 1);
      assert.deepEqual([...row.blob], [0, 255, 7]);
      assert.equal(row?.at.toISOString(), at.toISOString());
      // A unique violation arrives with its SQLSTATE (the API turns 23505 into a 409) and Postgres's message.
      const violation = await db.query('INSERT INTO items (n) VALUES (1)').then(
        () => undefined,
        (e: unknown) => e as Error & { code?: string; constraint?: string },
      );
      assert.equal(violation?.code, '23505');
      assert.equal(violation?.constraint, 'items_pkey');
      assert.match(violation?.message ?? '', /duplicate key/);
      // A transaction whose work throws is rolled back, and the database goes on serving.
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.query('INSERT INTO items (n) VALUES (2)');
          throw new Error('the caller changed its mind');
        }),
        /changed its mind/,
      );
      // A statement that fails inside a transaction fails it; the caller sees the statement's error.
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.query('INSERT INTO items (n) VALUES (3)');
          await tx.query('INSERT INTO items (n) VALUES (1)');
        }),
        (e: Error & { code?: string }) => e.code === '23505',
      );
      // The statement that opens a transaction can fail too; statements sent at once wait for the one that opens it.
      await assert.rejects(
        db.transaction(async (tx) => tx.query('INSERT INTO items (n) VALUES (1)')),
        (e: Error & { code?: string }) => e.code === '23505',
      );
      await assert.rejects(
        db.transaction(async (tx) => {
          await Promise.all([6, 7].map((n) => tx.query('INSERT INTO items (n) VALUES ($1)', [n])));
          throw new Error('the caller changed its mind');
        }),
        /changed its mind/,
      );
      assert.deepEqual(await db.transaction(async (tx) => tx.query('SELECT n FROM items ORDER BY n')), [{ n: 1 }]);
      // Transactions take turns: two at once both commit, neither sees the other half-done.
      await Promise.all(
        [4, 5].map((n) =>
          db.transaction(async (tx) => {
            await tx.query('INSERT INTO items (n) VALUES ($1)', [n]);
            await tx.query('INSERT INTO items (n) VALUES ($1)', [n * 10]);
          }),
        ),
      );
      assert.deepEqual(
        (await db.query<{ n: number }>('SELECT n FROM items ORDER BY n')).map((r) => r.n),
        [1, 4, 5, 40, 50],
      );
    } finally {
      await db.close();
    }
    await assert.rejects(db.query('SELECT 1'), /the embedded database is closed/);
  });

  it('keeps planner statistics fresh (no autovacuum here): the duplicate check uses its index as a bank grows', async () => {
    // The background check would analyze on its own schedule, racing the checks made here on a slow machine.
    const db = await openEmbeddedDatabase(join(stats.path, 'db'), { statisticsCheckMs: 3_600_000 });
    const plan = async () =>
      (
        await db.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN SELECT id FROM memories WHERE tenant = 't' AND bank_id = 'b' AND space = 's' AND source_id IS NULL AND content_hash = ANY(ARRAY['h5'])`,
        )
      )
        .map((r) => r['QUERY PLAN'])
        .join('\n');
    try {
      // The shape of the engine's memories table that matters here: partitioned by bank, its rows in the shared
      // partition, with a bank index and the duplicate-check index.
      await db.exec(`CREATE TABLE memories (id text, tenant text, bank_id text, space text, source_id text, content_hash text,
        change_seq bigint, padding text, part int NOT NULL DEFAULT 0, PRIMARY KEY (tenant, id, part)) PARTITION BY LIST (part);
        CREATE TABLE memories_shared (LIKE memories INCLUDING DEFAULTS);
        CREATE INDEX memories_bank_change ON memories_shared (tenant, bank_id, change_seq);
        CREATE UNIQUE INDEX memories_shared_dedupe ON memories_shared (tenant, bank_id, space, content_hash, part)
          WHERE source_id IS NULL;
        ALTER TABLE memories ATTACH PARTITION memories_shared DEFAULT;
        CREATE UNIQUE INDEX memories_dedupe ON memories (tenant, bank_id, space, content_hash, part) WHERE source_id IS NULL;`);
      await db.exec(
        `INSERT INTO memories SELECT 'm' || g, 't', 'b', 's', NULL, 'h' || g, g, repeat('x', 500) FROM generate_series(1, 5000) g`,
      );
      const [before] = await db.query<{ reltuples: number }>(
        `SELECT reltuples FROM pg_class WHERE relname = 'memories_shared'`,
      );
      assert.equal(before?.reltuples, -1, 'never analyzed: the planner has no statistics');
      const raw = { query: <T extends object>(sql: string) => db.query<T>(sql) };
      assert.deepEqual(await refreshStatistics(raw), ['memories']);
      const [after] = await db.query<{ reltuples: number }>(
        `SELECT reltuples FROM pg_class WHERE relname = 'memories_shared'`,
      );
      assert.equal(after?.reltuples, 5000);
      assert.match(await plan(), /memories_shared_dedupe/);
      // Fresh statistics are left alone; a tenth more data is analyzed again.
      assert.deepEqual(await refreshStatistics(raw), []);
      await db.exec(
        `INSERT INTO memories SELECT 'n' || g, 't', 'b', 's', NULL, 'k' || g, g, repeat('x', 500) FROM generate_series(1, 1000) g`,
      );
      assert.deepEqual(await refreshStatistics(raw), ['memories']);
      const [grown] = await db.query<{ reltuples: number }>(
        `SELECT reltuples FROM pg_class WHERE relname = 'memories_shared'`,
      );
      assert.equal(grown?.reltuples, 6000);
    } finally {
      await db.close();
    }
  });

  it('gathers no planner statistics on what users wrote (pg_statistic would keep copies past deletion)', async () => {
    const engine = await startTestEngine();
    try {
      const r = await call(engine.url, 'POST', '/v1/default/banks/stats/memories', {
        items: Array.from({ length: 30 }, (_, i) => ({
          content: `Quillonbrand note ${i % 3}`,
          tags: ['secretive'],
          metadata: { k: 'zephyrix' },
        })),
      });
      assert.equal(r.status, 200);
      await engine.engine.db.query('ANALYZE memories');
      const columns = (
        await engine.engine.db.query<{ attname: string }>(`SELECT attname FROM pg_stats WHERE tablename = 'memories'`)
      ).map((c) => c.attname);
      assert.ok(
        columns.includes('bank_id') && columns.includes('created_at'),
        'the partition and time columns have statistics',
      );
      for (const c of [
        'text',
        'context',
        'metadata',
        'tags',
        'entities',
        'fts',
        'document_id',
        'content_hash',
        'body_enc',
      ])
        assert.ok(!columns.includes(c), c);
      const values = await engine.engine.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stats WHERE tablename = 'memories' AND (most_common_vals::text ILIKE '%quillonbrand%' OR most_common_vals::text ILIKE '%zephyrix%' OR histogram_bounds::text ILIKE '%quillonbrand%')`,
      );
      assert.equal(values[0]?.n, 0);
    } finally {
      await engine.dispose();
    }
  });
});
