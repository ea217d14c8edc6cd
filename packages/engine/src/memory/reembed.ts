import type { Database, Queryable, Transaction } from '../db/database.js';
import { EMBEDDING_LOCK, readEmbeddingRecord, type EmbeddingRecord } from '../db/embedding-schema.js';
import type { Embedder } from '../embeddings/embedder.js';
import { embeddingText } from './embedding-text.js';
import { vectorLiteral } from './vector-literal.js';
import { MEMORY_COLUMNS, type MemoryReader, type MemoryRow } from './rows.js';
import type { MemoryStore } from './store.js';

/**
 * `mnemos reembed`: moves a database to another embedding model while the old vectors keep serving.
 *
 * 1. The target model is recorded as `embedding_next` in mnemos_meta and a column `embedding_next` sized for it is
 *    added next to `embedding` (a different target than a previous, unfinished run starts over).
 * 2. Every memory (all tenants, banks and spaces) is re-embedded in batches, each batch committed on its own; the
 *    row's `updated_at` is kept with the new vector (`embedding_next_of`), so a memory edited meanwhile is done again.
 * 3. One final transaction, with writers locked out, re-embeds what was written or edited during step 2, then swaps
 *    the columns and records the new model as `embedding`.
 *
 * Interrupted anywhere, the database is still on the old model (engines with it keep working; an engine with the new
 * model refuses to start and says a re-embedding is unfinished) and running the command again continues where it
 * stopped. Memories that fail to decrypt cannot be re-embedded; they are counted and end up without a vector
 * (keyword search still finds them).
 */

export interface ReembedOutcome {
  /** What the database used before. */
  from: EmbeddingRecord | undefined;
  to: EmbeddingRecord;
  /** Memories embedded with the new model by this run. */
  reembedded: number;
  /** Memories that could not be read (failed to decrypt) and have no vector now. */
  unreadable: number;
  /** True when the database already used the model: nothing was done. */
  alreadyCurrent: boolean;
}

const NEEDS_WORK = 'embedding_next IS NULL OR embedding_next_of IS DISTINCT FROM updated_at';
/** The row plus its version (`updated_at` as text: exact to the microsecond, unlike a JS Date). */
const SELECTED = `tenant, updated_at::text AS version, ${MEMORY_COLUMNS}`;
type VersionedRow = MemoryRow & { tenant: string; version: string };

interface Embedded {
  tenant: string;
  id: string;
  version: string;
  vector: Float32Array;
}

export async function reembed(
  store: MemoryStore,
  embedder: Embedder,
  options: { batchSize?: number; log?: (message: string) => void } = {},
): Promise<ReembedOutcome> {
  const db: Database = store.db;
  const batchSize = Math.max(1, Math.trunc(options.batchSize ?? 64));
  const log = options.log ?? (() => undefined);
  const to: EmbeddingRecord = { model: embedder.id, dimension: embedder.dimension };
  const from = await prepare(db, to);
  if (from === undefined || (from.model === to.model && from.dimension === to.dimension)) {
    return { from, to, reembedded: 0, unreadable: 0, alreadyCurrent: true };
  }
  const total = Number((await db.query<{ n: string | number }>('SELECT count(*) AS n FROM memories'))[0]?.n ?? 0);
  let reembedded = 0;
  const unreadable = new Set<string>();
  // Keyset pass over every memory in key order (tenant, id), each batch its own transaction.
  let after = { tenant: '', id: '00000000-0000-0000-0000-000000000000' };
  for (;;) {
    const rows = await db.query<VersionedRow>(
      `SELECT ${SELECTED} FROM memories WHERE (tenant, id) > ($1, $2::uuid) AND (${NEEDS_WORK})
       ORDER BY tenant, id LIMIT ${batchSize}`,
      [after.tenant, after.id],
    );
    const last = rows[rows.length - 1];
    if (last === undefined) break;
    after = { tenant: last.tenant, id: last.id };
    const embedded = await embedRows(store, db, embedder, rows, unreadable);
    reembedded += await storeVectors(db, embedded);
    log(`re-embedded ${reembedded} of ${total} memories`);
  }
  // Writers wait while the stragglers are done and the columns swap; readers keep going.
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [EMBEDDING_LOCK]);
    // Every bank's change log starts over (every vector changes): engines holding a copy of a bank load it again. The
    // banks' rows are locked before the memories table, the order writers follow (bank row, then memories).
    await tx.query('UPDATE banks SET change_log_id = gen_random_uuid()');
    await tx.query('LOCK TABLE memories IN SHARE ROW EXCLUSIVE MODE');
    const pending = await readEmbeddingRecord(tx, 'embedding_next');
    if (pending?.model !== to.model || pending.dimension !== to.dimension) {
      throw new Error('another `mnemos reembed` with a different model ran meanwhile; run the command again');
    }
    for (;;) {
      const rows = await tx.query<VersionedRow>(
        `SELECT ${SELECTED} FROM memories WHERE (${NEEDS_WORK}) AND NOT (id = ANY($1::uuid[]))
         ORDER BY tenant, id LIMIT ${batchSize}`,
        [[...unreadable]],
      );
      if (rows.length === 0) break;
      reembedded += await storeVectors(tx, await embedRows(store, tx, embedder, rows, unreadable));
    }
    await tx.exec(`ALTER TABLE memories DROP COLUMN embedding;
      ALTER TABLE memories RENAME COLUMN embedding_next TO embedding;
      ALTER TABLE memories DROP COLUMN embedding_next_of;`);
    await tx.query("UPDATE mnemos_meta SET value = $1::jsonb WHERE key = 'embedding'", [JSON.stringify(to)]);
    await tx.query("DELETE FROM mnemos_meta WHERE key = 'embedding_next'");
  });
  return { from, to, reembedded, unreadable: unreadable.size, alreadyCurrent: false };
}

/**
 * Records the target and adds its column (or keeps both from an unfinished run with the same target). Answers the
 * model the database uses now; undefined for a database that never recorded one (it simply takes the new model).
 */
async function prepare(db: Database, to: EmbeddingRecord): Promise<EmbeddingRecord | undefined> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [EMBEDDING_LOCK]);
    const current = await readEmbeddingRecord(tx, 'embedding');
    const pending = await readEmbeddingRecord(tx, 'embedding_next');
    const same = (a: EmbeddingRecord | undefined) => a?.model === to.model && a.dimension === to.dimension;
    if (current === undefined || same(current)) {
      // Nothing to migrate (an unfinished run towards another model is abandoned: the vectors in use stay).
      if (pending !== undefined) await dropNext(tx);
      if (current === undefined) {
        await tx.query("INSERT INTO mnemos_meta (key, value) VALUES ('embedding', $1::jsonb)", [JSON.stringify(to)]);
        await tx.query(`ALTER TABLE memories ADD COLUMN IF NOT EXISTS embedding vector(${Math.trunc(to.dimension)})`);
      }
      return current;
    }
    if (!same(pending)) {
      if (pending !== undefined) await dropNext(tx);
      await tx.exec(`ALTER TABLE memories ADD COLUMN embedding_next vector(${Math.trunc(to.dimension)});
        ALTER TABLE memories ADD COLUMN embedding_next_of timestamptz;`);
      await tx.query("INSERT INTO mnemos_meta (key, value) VALUES ('embedding_next', $1::jsonb)", [JSON.stringify(to)]);
    }
    return current;
  });
}

async function dropNext(tx: Transaction): Promise<void> {
  await tx.exec(`ALTER TABLE memories DROP COLUMN IF EXISTS embedding_next;
    ALTER TABLE memories DROP COLUMN IF EXISTS embedding_next_of;
    DELETE FROM mnemos_meta WHERE key = 'embedding_next';`);
}

/** Embeds the rows' texts with the new model (memories that fail to decrypt are noted and skipped). */
async function embedRows(
  reader: MemoryReader,
  db: Queryable,
  embedder: Embedder,
  rows: readonly VersionedRow[],
  unreadable: Set<string>,
): Promise<Embedded[]> {
  const memories: Array<{ tenant: string; id: string; version: string; text: string }> = [];
  const byTenant = new Map<string, VersionedRow[]>();
  for (const r of rows) byTenant.set(r.tenant, [...(byTenant.get(r.tenant) ?? []), r]);
  for (const [tenant, group] of byTenant) {
    const opened = new Map((await reader.open(db, tenant, group)).map((m) => [m.id, m]));
    for (const r of group) {
      const m = opened.get(r.id);
      if (m === undefined) unreadable.add(r.id);
      else memories.push({ tenant, id: r.id, version: r.version, text: embeddingText(m) });
    }
  }
  if (memories.length === 0) return [];
  const vectors = await embedder.embed(
    memories.map((m) => m.text),
    'document',
  );
  return memories.map((m, i) => ({ tenant: m.tenant, id: m.id, version: m.version, vector: vectors[i]! }));
}

/** Stores new vectors in one statement, except for rows edited since they were read (they are done again). */
async function storeVectors(q: Queryable, embedded: readonly Embedded[]): Promise<number> {
  if (embedded.length === 0) return 0;
  const updated = await q.query<{ id: string }>(
    `UPDATE memories m SET embedding_next = v.embedding::vector, embedding_next_of = m.updated_at
     FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[]) AS v(tenant, id, version, embedding)
     WHERE m.tenant = v.tenant AND m.id = v.id AND m.updated_at = v.version::timestamptz RETURNING m.id`,
    [
      embedded.map((e) => e.tenant),
      embedded.map((e) => e.id),
      embedded.map((e) => e.version),
      embedded.map((e) => vectorLiteral(e.vector)),
    ],
  );
  return updated.length;
}
