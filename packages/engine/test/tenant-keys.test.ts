// test-runner: long (started first, so the suite does not wait for it at the end)
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { touchBank } from '../src/memory/bank-store.js';
import { plaintextCodec } from '../src/crypto/codec.js';
import type { Database, Queryable } from '../src/db/database.js';
import { ensureEmbeddingSchema } from '../src/db/embedding-schema.js';
import { migrate } from '../src/db/migrate.js';
import { migrations } from '../src/db/migrations/index.js';
import { openEmbeddedDatabase } from '../src/db/pglite.js';
import type { Embedder } from '../src/embeddings/embedder.js';
import { createLocalEmbedder } from '../src/embeddings/local.js';
import { deleteMemory, MemoryStore } from '../src/memory/store.js';
import type { MemoryType, NewMemory, Partition } from '../src/memory/types.js';
import { startEngine, type RunningEngine } from '../src/index.js';
import { sha256Hex } from '../src/util/hash.js';
import { call, MODEL_DIR, tempHome, testEnv } from './helpers/engine.js';
import { seedEmbeddedDatabase } from './helpers/pristine-database.js';

/**
 * The schema shards by tenant: every primary key, foreign key and unique index of tenant data leads with the tenant,
 * and a database an earlier release built (keys on the id alone) is migrated in place, its data kept and served.
 */

/** Columns of `memories` that today's store writes and migrations after the tenant keys add, with their types. */
const LATER_MEMORY_COLUMNS: Record<string, string> = {
  state: 'text',
  valid_from: 'timestamptz',
  valid_to: 'timestamptz',
  superseded_by: 'uuid',
  expires_at: 'timestamptz',
  part: 'integer NOT NULL DEFAULT 0',
};

/** The migration that puts the tenant in the keys; the database an earlier release left has every one before it. */
const TENANT_KEYS = 6;
/** The migration that partitions memories by bank. */
const MEMORIES_BY_BANK = 18;
const TOKEN = 'tenant-keys-test-token-0123456789';

interface KeyRow {
  table_name: string;
  name: string;
  kind: string;
  first_column: string | null;
  first_referenced: string | null;
}

async function tenantTables(db: Queryable): Promise<string[]> {
  const rows = await db.query<{ table_name: string }>(
    `SELECT c.relname AS table_name FROM pg_class c
     JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant' AND NOT a.attisdropped
     WHERE c.relkind IN ('r', 'p') AND c.relnamespace = current_schema()::regnamespace ORDER BY 1`,
  );
  return rows.map((r) => r.table_name);
}

/** Primary keys, foreign keys and unique constraints on (or referencing) tenant tables, and their unique indexes. */
async function tenantKeys(db: Queryable, tables: string[]): Promise<KeyRow[]> {
  const constraints = await db.query<KeyRow>(
    `SELECT t.relname AS table_name, con.conname AS name, con.contype::text AS kind,
       (SELECT attname FROM pg_attribute WHERE attrelid = con.conrelid AND attnum = con.conkey[1]) AS first_column,
       (SELECT attname FROM pg_attribute WHERE attrelid = con.confrelid AND attnum = con.confkey[1]) AS first_referenced
     FROM pg_constraint con JOIN pg_class t ON t.oid = con.conrelid
     LEFT JOIN pg_class r ON r.oid = con.confrelid
     WHERE con.contype IN ('p', 'f', 'u') AND (t.relname = ANY($1::text[]) OR r.relname = ANY($1::text[]))`,
    [tables],
  );
  const indexes = await db.query<KeyRow>(
    `SELECT t.relname AS table_name, ic.relname AS name, 'unique index' AS kind,
       (SELECT attname FROM pg_attribute WHERE attrelid = i.indrelid AND attnum = i.indkey[0]) AS first_column,
       NULL AS first_referenced
     FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
     WHERE i.indisunique AND t.relname = ANY($1::text[])`,
    [tables],
  );
  return [...constraints, ...indexes];
}

/** The definitions of every constraint and index on tenant tables, to compare two databases' schemas. */
async function keyDefinitions(db: Queryable): Promise<string[]> {
  const tables = await tenantTables(db);
  const rows = await db.query<{ definition: string }>(
    `SELECT t.relname || ' ' || con.conname || ' ' || pg_get_constraintdef(con.oid) AS definition
     FROM pg_constraint con JOIN pg_class t ON t.oid = con.conrelid WHERE t.relname = ANY($1::text[])
     UNION ALL
     SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
     WHERE t.relname = ANY($1::text[])
     ORDER BY 1`,
    [tables],
  );
  return rows.map((r) => r.definition);
}

function newMemory(text: string, type: MemoryType, embedding: Float32Array, sourceId: string | null = null) {
  return {
    id: randomUUID(),
    type,
    text,
    context: null,
    metadata: {},
    tags: [],
    entities: [],
    documentId: null,
    sourceId,
    batchId: randomUUID(),
    seq: 0,
    contentHash: sha256Hex(text),
    tokenCount: 12,
    occurredAt: null,
    expiresAt: null,
    embedding,
  } satisfies NewMemory & { embedding: Float32Array };
}

async function counts(db: Queryable): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of ['banks', 'memories', 'memory_tombstones', 'operations', 'jobs']) {
    const [row] = await db.query<{ n: string | number }>(`SELECT count(*) AS n FROM ${table}`);
    out[table] = Number(row?.n);
  }
  return out;
}

const acme: Partition = { tenant: 'acme', bankId: 'notes', space: 'default' };
const globex: Partition = { tenant: 'globex', bankId: 'notes', space: 'default' };

describe('tenant keys', () => {
  const home = tempHome('mnemos-tenant-keys-');
  let model: Embedder;
  let fresh: Database;

  before(async () => {
    model = await createLocalEmbedder({ model: MODEL_DIR, cacheDir: home.path, dtype: 'fp32', log: () => undefined });
    // The home's database is the migrated copy a new home gets (see pristine-database.ts): migrate finds nothing to do.
    fresh = await openEmbeddedDatabase(join(home.path, 'db'));
    await migrate(fresh);
    await ensureEmbeddingSchema(fresh, model.id, model.dimension);
  });
  after(async () => {
    await model?.close();
    await fresh?.close();
    home.remove();
  });

  async function embed(...texts: string[]): Promise<Float32Array[]> {
    return model.embed(texts, 'document');
  }

  it('leads every primary key, foreign key and unique index of tenant data with the tenant', async () => {
    const tables = await tenantTables(fresh);
    for (const t of ['banks', 'memories', 'memory_tombstones', 'operations', 'jobs']) assert.ok(tables.includes(t), t);
    const keys = await tenantKeys(fresh, tables);
    for (const table of tables) {
      assert.ok(
        keys.some((k) => k.table_name === table && k.kind === 'p'),
        `${table} has a primary key`,
      );
    }
    for (const k of keys) {
      assert.equal(k.first_column, 'tenant', `${k.table_name}.${k.name} (${k.kind}) starts with the tenant`);
      if (k.kind === 'f') assert.equal(k.first_referenced, 'tenant', `${k.name} references a key that starts with it`);
    }
    assert.ok(
      keys.some((k) => k.kind === 'f' && k.table_name === 'memories'),
      'a fact references its source',
    );
    assert.ok(
      keys.some((k) => k.kind === 'f' && k.table_name === 'jobs'),
      'a job references its operation',
    );
    // Nothing hands out numbers from one counter shared by every tenant.
    const [sequences] = await fresh.query<{ n: string | number }>(
      `SELECT count(*) AS n FROM pg_class WHERE relkind = 'S' AND relnamespace = current_schema()::regnamespace`,
    );
    assert.equal(Number(sequences?.n), 0);
  });

  it("refuses a fact whose source is another tenant's memory, and a job under another tenant's operation", async () => {
    const store = new MemoryStore(fresh, plaintextCodec);
    const [source, fact] = await embed('Alice keeps bees on her roof.', 'Alice is a beekeeper.');
    const raw = newMemory('Alice keeps bees on her roof.', 'raw', source!);
    await fresh.transaction((tx) => store.insert(tx, acme, [raw]));
    const foreign = fresh.transaction((tx) => store.insert(tx, globex, [newMemory('x', 'world', fact!, raw.id)]));
    await assert.rejects(foreign, (e: Error & { code?: string }) => e.code === '23503');
    const own = newMemory('Alice is a beekeeper.', 'world', fact!, raw.id);
    await fresh.transaction((tx) => store.insert(tx, acme, [own]));
    assert.equal(await deleteMemory(fresh, globex.tenant, globex.bankId, raw.id), 0, 'another tenant deletes nothing');
    // The fact goes with its source.
    assert.equal(await deleteMemory(fresh, acme.tenant, acme.bankId, raw.id), 2);
    assert.equal((await fresh.query('SELECT 1 FROM memories WHERE tenant = $1', [acme.tenant])).length, 0);

    const operation = randomUUID();
    await fresh.query(
      `INSERT INTO operations (id, tenant, bank_id, space, kind) VALUES ($1, 'acme', 'notes', 'default', 'retain')`,
      [operation],
    );
    const job = (tenant: string) =>
      fresh.query(
        `INSERT INTO jobs (id, operation_id, tenant, bank_id, space, kind) VALUES ($1, $2, $3, 'notes', 'default', 'retain')`,
        [randomUUID(), operation, tenant],
      );
    await assert.rejects(job('globex'), (e: Error & { code?: string }) => e.code === '23503');
    await job('acme');
    await fresh.query('DELETE FROM operations WHERE tenant = $1 AND id = $2', ['acme', operation]);
    assert.equal((await fresh.query('SELECT 1 FROM jobs WHERE tenant = $1', ['acme'])).length, 0, 'jobs cascade');
  });

  it('migrates a database an earlier release built in place: every row kept, served, and only to its tenant', async () => {
    const engineHome = join(home.path, 'engine');
    mkdirSync(engineHome);
    // A never-migrated copy of initdb's folder, which the earlier release's migrations then build.
    seedEmbeddedDatabase(engineHome, 'initdb');
    const old = await openEmbeddedDatabase(join(engineHome, 'db'));
    const ids: Record<string, string> = {};
    const operations = { done: randomUUID(), queued: randomUUID() };
    try {
      await migrate(
        old,
        migrations.filter((m) => m.version < TENANT_KEYS),
      );
      await ensureEmbeddingSchema(old, model.id, model.dimension);
      const store = new MemoryStore(old, plaintextCodec);
      const texts = [
        'Alice moved to Lisbon in March to work on the harbour project.',
        'Alice lives in Lisbon.',
        'The quarterly budget review is on Friday afternoon.',
        'A note that was deleted before the upgrade.',
        'Globex ships anvils from its Denver warehouse.',
      ];
      const [lisbon, lives, budget, deleted, anvils] = await embed(...texts);
      const raw = newMemory(texts[0]!, 'raw', lisbon!);
      const rows = {
        raw,
        fact: newMemory(texts[1]!, 'world', lives!, raw.id),
        budget: newMemory(texts[2]!, 'raw', budget!),
        deleted: newMemory(texts[3]!, 'raw', deleted!),
        anvils: newMemory(texts[4]!, 'raw', anvils!),
      };
      await old.transaction(async (tx) => {
        await touchBank(tx, acme.tenant, acme.bankId);
        await touchBank(tx, globex.tenant, globex.bankId);
        // Today's store also writes columns later migrations add (validity, expiry, partition), which that release's schema
        // lacks: they are there only while the rows are written, then dropped with what they held, as that release
        // never had them.
        const present = new Set(
          (
            await tx.query<{ column_name: string }>(
              `SELECT column_name FROM information_schema.columns WHERE table_name = 'memories'`,
            )
          ).map((c) => c.column_name),
        );
        const lacking = Object.entries(LATER_MEMORY_COLUMNS).filter(([column]) => !present.has(column));
        for (const [column, type] of lacking) await tx.query(`ALTER TABLE memories ADD COLUMN ${column} ${type}`);
        // The dedupe index the store's insert names holds the partition number (migration 018); it goes with its column.
        await tx.query(
          'CREATE UNIQUE INDEX memories_dedupe_by_part ON memories (tenant, bank_id, space, content_hash, part) WHERE source_id IS NULL',
        );
        // And the names it finds go to a table of its own (migration 012), which that release lacks too; it reads the
        // bank's partition from the bank's row (migration 019).
        await tx.query(
          `CREATE TABLE memory_entities (tenant text, bank_id text, memory_id uuid, key text, name text,
             name_enc bytea, kind text, part integer)`,
        );
        await tx.query('ALTER TABLE banks ADD COLUMN part integer NOT NULL DEFAULT 0');
        await store.insert(tx, acme, [rows.raw, rows.budget, rows.deleted]);
        await store.insert(tx, acme, [rows.fact]);
        await store.insert(tx, globex, [rows.anvils]);
        await tx.query('DROP TABLE memory_entities');
        await tx.query('ALTER TABLE banks DROP COLUMN part');
        for (const [column] of lacking) await tx.query(`ALTER TABLE memories DROP COLUMN ${column}`);
      });
      for (const [name, row] of Object.entries(rows)) ids[name] = row.id;
      assert.equal(await deleteMemory(old, acme.tenant, acme.bankId, rows.deleted.id), 1);
      // A finished async retain, and one still queued when the old release stopped.
      await old.query(
        `INSERT INTO operations (id, tenant, bank_id, space, kind, items_count, memory_ids)
         VALUES ($1, 'acme', 'notes', 'default', 'retain', 1, ARRAY[$2]::uuid[]), ($3, 'acme', 'notes', 'default', 'retain', 1, '{}')`,
        [operations.done, rows.raw.id, operations.queued],
      );
      const queuedItem = {
        content: 'Bob adopted a grey cat named Pixel.',
        timestamp: null,
        context: null,
        metadata: null,
        tags: null,
        document_id: null,
        entities: null,
      };
      await old.query(
        `INSERT INTO jobs (id, operation_id, tenant, bank_id, space, kind, payload, status, attempts, result, finished_at)
         VALUES ($1, $2, 'acme', 'notes', 'default', 'retain', '{}', 'succeeded', 1, $3::jsonb, now()),
                ($4, $5, 'acme', 'notes', 'default', 'retain', $6::jsonb, 'queued', 0, NULL, NULL)`,
        [
          randomUUID(),
          operations.done,
          JSON.stringify({ memory_ids: [rows.raw.id] }),
          randomUUID(),
          operations.queued,
          JSON.stringify({ items: [queuedItem] }),
        ],
      );
      // An operator built one new key's index ahead (it is adopted, not built again); another build failed half-way
      // (an invalid index, as a failed CREATE INDEX CONCURRENTLY leaves: it is replaced).
      await old.exec('CREATE UNIQUE INDEX memories_tenant_id ON memories (tenant, id)');
      await old.exec(`CREATE UNIQUE INDEX jobs_tenant_id ON jobs (tenant, id);
        UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'jobs_tenant_id'::regclass`);
      const [prebuilt] = await old.query<{ oid: number }>(`SELECT 'memories_tenant_id'::regclass::oid AS oid`);
      const rowsBefore = await counts(old);
      // Up to the partitioning of memories first, whose key replaces the one the tenant keys made.
      const applied = await migrate(
        old,
        migrations.filter((m) => m.version < MEMORIES_BY_BANK),
      );
      const [adopted] = await old.query<{ oid: number }>(
        `SELECT conindid AS oid FROM pg_constraint WHERE conname = 'memories_pkey'`,
      );
      assert.equal(Number(adopted?.oid), Number(prebuilt?.oid), 'the prebuilt index became the primary key');
      applied.push(...(await migrate(old)));
      assert.equal(applied[0], TENANT_KEYS, 'the tenant keys are the first migration it lacked');
      assert.deepEqual(await counts(old), rowsBefore, 'the migration keeps every row');
      assert.deepEqual(await termCounts(old), await recountedTerms(old), 'the bank statistics count the rows it had');
      assert.deepEqual(await keyDefinitions(old), await keyDefinitions(fresh), 'the same keys as a new database');
    } finally {
      await old.close();
    }

    let running: RunningEngine | undefined;
    try {
      running = await startEngine({ env: testEnv(engineHome, { MNEMOS_API_AUTH_TOKEN: TOKEN }) });
      const url = running.url;
      const auth = { authorization: `Bearer ${TOKEN}` };
      const get = (tenant: string, id: string) =>
        call<{ text: string; source_id: string | null }>(
          url,
          'GET',
          `/v1/${tenant}/banks/notes/memories/${id}`,
          undefined,
          auth,
        );

      assert.equal(
        (await get('acme', ids['raw']!)).body.text,
        'Alice moved to Lisbon in March to work on the harbour project.',
      );
      assert.equal((await get('acme', ids['fact']!)).body.source_id, ids['raw']);
      assert.equal((await get('globex', ids['anvils']!)).status, 200);
      assert.equal((await get('acme', ids['deleted']!)).status, 404);

      // Another tenant reaches none of acme's memories or operations by id, in the same bank name.
      assert.equal((await get('globex', ids['raw']!)).status, 404);
      const patched = await call(url, 'PATCH', `/v1/globex/banks/notes/memories/${ids['raw']}`, { text: 'x' }, auth);
      assert.equal(patched.status, 404);
      const removed = await call(url, 'DELETE', `/v1/globex/banks/notes/memories/${ids['raw']}`, undefined, auth);
      assert.equal(removed.status, 404);
      const foreignOperation = await call(url, 'GET', `/v1/globex/operations/${operations.done}`, undefined, auth);
      assert.equal(foreignOperation.status, 404);

      const recall = (tenant: string, query: string) =>
        call<{ results: Array<{ id: string }> }>(
          url,
          'POST',
          `/v1/${tenant}/banks/notes/memories/recall`,
          { query },
          auth,
        );
      const lisbon = (await recall('acme', 'Where does Alice live?')).body.results.map((r) => r.id);
      assert.ok(lisbon.includes(ids['raw']!) || lisbon.includes(ids['fact']!), 'recall finds the migrated memories');
      assert.ok(!lisbon.includes(ids['anvils']!), "recall never returns another tenant's memory");
      const anvilsFound = (await recall('globex', 'Who ships anvils?')).body.results.map((r) => r.id);
      assert.deepEqual(anvilsFound, [ids['anvils']]);

      const done = await call<{ status: string; memory_ids: string[] }>(
        url,
        'GET',
        `/v1/acme/operations/${operations.done}`,
        undefined,
        auth,
      );
      assert.equal(done.body.status, 'completed');
      assert.deepEqual(done.body.memory_ids, [ids['raw']]);
      // The job queued under the old keys runs under the new ones.
      let queued = { status: 'pending', memory_ids: [] as string[] };
      for (const deadline = Date.now() + 60_000; queued.status !== 'completed' && Date.now() < deadline;) {
        await new Promise((r) => setTimeout(r, 100));
        const answer = await call<typeof queued>(
          url,
          'GET',
          `/v1/acme/operations/${operations.queued}`,
          undefined,
          auth,
        );
        queued = answer.body;
        assert.notEqual(queued.status, 'failed');
      }
      assert.equal(queued.status, 'completed');
      assert.equal((await get('acme', queued.memory_ids[0]!)).body.text, 'Bob adopted a grey cat named Pixel.');
      const payloads = await running.engine.db.query<{ p: string }>(
        `SELECT payload::text AS p FROM jobs WHERE tenant = 'acme' AND operation_id = $1`,
        [operations.queued],
      );
      assert.deepEqual(
        payloads.map((r) => r.p),
        ['{}'],
        'the queued copy is cleared',
      );

      // Deleting a migrated source takes its fact with it (the new foreign key cascades).
      const gone = await call<{ deleted_count: number }>(
        url,
        'DELETE',
        `/v1/acme/banks/notes/memories/${ids['raw']}`,
        undefined,
        auth,
      );
      assert.equal(gone.body.deleted_count, 2);
      assert.equal((await get('acme', ids['fact']!)).status, 404);
      const listed = await call<{ total: number }>(url, 'GET', '/v1/acme/banks/notes/memories', undefined, auth);
      assert.equal(listed.body.total, 2, 'the budget note and the queued retain remain');
    } finally {
      await running?.close();
    }
  });
});

/** The bank statistics as the writes keep them (migration 008), zero counts left out. */
async function termCounts(db: Queryable): Promise<Array<{ bank: string; term: string; n: number }>> {
  return db.query<{ bank: string; term: string; n: number }>(
    `SELECT tenant || '/' || bank_id AS bank, term, memories::int AS n FROM bank_term_counts WHERE memories <> 0
     UNION ALL SELECT tenant || '/' || bank_id, '', memory_count::int FROM banks WHERE memory_count <> 0
     ORDER BY 1, 2`,
  );
}

/** The same statistics counted from the rows themselves. */
async function recountedTerms(db: Queryable): Promise<Array<{ bank: string; term: string; n: number }>> {
  return db.query<{ bank: string; term: string; n: number }>(
    `SELECT m.tenant || '/' || m.bank_id AS bank, u.lexeme AS term, count(*)::int AS n
     FROM memories m, unnest(m.fts) u GROUP BY 1, 2
     UNION ALL SELECT tenant || '/' || bank_id, '', count(*)::int FROM memories GROUP BY 1
     ORDER BY 1, 2`,
  );
}
