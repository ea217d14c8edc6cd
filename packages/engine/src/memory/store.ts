import type { Database, Queryable, SqlParam, Transaction } from '../db/database.js';
import { toVectorLiteral } from '../db/database.js';
import { vectorCopyData } from '../db/vector-copy.js';
import { codecFor, type PlainBody, type SealedBody } from '../crypto/codec.js';
import { IntegrityError } from '../crypto/envelope.js';
import { documentTsvectorSql } from '../recall/keyword.js';
import type { Memory, MemoryType, NewMemory, Partition } from './types.js';
import { ORG_BANK_ID } from './types.js';

/** Columns read for a memory; `body_enc` is there for encryption at rest. */
export const MEMORY_COLUMNS = `id, bank_id, space, type, text, context, metadata, body_enc, tags, entities, document_id,
  source_id, occurred_at, created_at, updated_at, state, superseded_by, valid_to`;
export const MEMORY_COLUMN_COUNT = MEMORY_COLUMNS.split(',').length;

export interface MemoryRow {
  id: string;
  bank_id: string;
  space: string;
  type: string;
  text: string | null;
  context: string | null;
  metadata: Record<string, string> | null;
  body_enc: Uint8Array | null;
  tags: string[];
  entities: string[];
  document_id: string | null;
  source_id: string | null;
  occurred_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
  state: string;
  superseded_by: string | null;
  valid_to: Date | string | null;
}

function iso(value: Date | string | null): string | null {
  if (value === null) return null;
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

/**
 * A row as a memory. `body` is the decrypted body from the codec (`rowsToMemories`); without it the row must be
 * plaintext: an encrypted row is never shown as an empty memory.
 */
export function rowToMemory(row: MemoryRow, body?: PlainBody): Memory {
  if (body === undefined && row.body_enc !== null) {
    throw new Error(`memory ${row.id} is encrypted: read it through rowsToMemories (the body codec)`);
  }
  return {
    id: row.id,
    bank_id: row.bank_id,
    space: row.space,
    type: row.type as MemoryType,
    text: body?.text ?? row.text ?? '',
    context: body ? body.context : row.context,
    metadata: body?.metadata ?? row.metadata ?? {},
    tags: row.tags,
    entities: body?.entities ?? row.entities,
    document_id: row.document_id,
    source_id: row.source_id,
    occurred_at: iso(row.occurred_at),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
    state: row.state === 'invalidated' ? 'invalidated' : 'valid',
    superseded_by: row.superseded_by,
    valid_to: iso(row.valid_to),
  };
}

/**
 * Rows as memories, decrypted through the body codec. Rows that fail to decrypt (tampered, moved) were reported by
 * the codec and are left out: they are never returned.
 */
export async function rowsToMemories(db: Queryable, tenant: string, rows: readonly MemoryRow[]): Promise<Memory[]> {
  const bodies = await codecFor(db).openRows(db, tenant, rows);
  const out: Memory[] = [];
  rows.forEach((row, i) => {
    const body = bodies[i];
    if (body !== undefined) out.push(rowToMemory(row, body));
  });
  return out;
}

/**
 * Ids already stored for these content hashes in the partition (retain is idempotent on identical content). Hashes
 * are the plain SHA-256 of the content; with encryption the stored ones are keyed (see the body codec).
 */
export async function findByHashes(db: Queryable, p: Partition, hashes: string[]): Promise<Map<string, string>> {
  if (hashes.length === 0) return new Map();
  const stored = await codecFor(db).dedupHashes(db, p.tenant, p.bankId, hashes);
  if (stored.size === 0) return new Map();
  const rows = await db.query<{ id: string; content_hash: string }>(
    `SELECT id, content_hash FROM memories
     WHERE tenant = $1 AND bank_id = $2 AND space = $3 AND source_id IS NULL AND content_hash = ANY($4::text[])`,
    [p.tenant, p.bankId, p.space, [...stored.keys()]],
  );
  return new Map(rows.map((r) => [stored.get(r.content_hash) ?? r.content_hash, r.id]));
}

/** From this many memories in one insert, vectors go to the embedded database in binary (see insertMemories). */
const BINARY_VECTORS_FROM = 3;

/** Inserts memories; a concurrent retain of the same content wins the race and its id is returned instead. */
export async function insertMemories(
  tx: Queryable,
  p: Partition,
  items: ReadonlyArray<NewMemory & { embedding: Float32Array }>,
): Promise<string[]> {
  const ids: string[] = [];
  if (items.length === 0) return ids;
  // With encryption: text/context/metadata go into body_enc, fts is the blind index, content_hash is keyed.
  const bank = await codecFor(tx).forWrite(tx, p.tenant, p.bankId);
  // Multi-row INSERTs (100 rows each): one round trip per chunk instead of one per memory.
  const inserted = new Set<string>();
  const PER_STATEMENT = 100;
  const COLUMNS = 20;
  // Embedded: vectors go in binary through a session temp table (emptied at commit) instead of as text to parse. For a
  // few memories the text is cheaper: emptying the temp table at commit costs file truncations in PGlite's file
  // system, more than parsing one or two vectors (measured: a single retain took 4.7 ms of main-thread time with the
  // text, 6.0 ms with the temp table).
  const copyFrom = items.length >= BINARY_VECTORS_FROM ? (tx as Partial<Transaction>).copyFrom?.bind(tx) : undefined;
  if (copyFrom) {
    await tx.query('CREATE TEMP TABLE IF NOT EXISTS mnemos_vectors_in (ord int PRIMARY KEY, embedding vector) ON COMMIT DELETE ROWS');
  }
  for (let start = 0; start < items.length; start += PER_STATEMENT) {
    const chunk = items.slice(start, start + PER_STATEMENT);
    if (copyFrom) {
      const data = vectorCopyData(chunk.map((m) => m.embedding), start);
      await copyFrom("COPY mnemos_vectors_in (ord, embedding) FROM '/dev/blob' WITH (FORMAT binary)", data);
    }
    const params: SqlParam[] = [];
    const rows = chunk.map((m, i) => {
      const sealed = bank.seal(m.id, { text: m.text, context: m.context, metadata: m.metadata, entities: m.entities });
      params.push(
        m.id, p.tenant, p.bankId, p.space, m.type, sealed.text, sealed.context, JSON.stringify(sealed.metadata), m.tags,
        sealed.entities, m.documentId, m.sourceId, m.batchId, m.seq, bank.dedupHash(m.contentHash), m.tokenCount,
        m.occurredAt, copyFrom ? start + i : toVectorLiteral(m.embedding), sealed.bodyEnc, sealed.fts,
      );
      const $ = (n: number) => `$${i * COLUMNS + n}`;
      const vector = copyFrom ? `(SELECT embedding FROM mnemos_vectors_in WHERE ord = ${$(18)}::int)` : `${$(18)}::vector`;
      return `(${$(1)}::uuid, ${$(2)}, ${$(3)}, ${$(4)}, ${$(5)}, ${$(6)}, ${$(7)}, ${$(8)}::jsonb, ${$(9)}::text[], ${$(10)}::text[],
        ${$(11)}, ${$(12)}::uuid, ${$(13)}::uuid, ${$(14)}::int, ${$(15)}, ${$(16)}::int, ${$(17)}::timestamptz, ${vector},
        ${$(19)}::bytea, COALESCE(${$(20)}::tsvector, ${documentTsvectorSql(`${$(6)}::text`)}))`;
    });
    const returned = await tx.query<{ id: string }>(
      `INSERT INTO memories (id, tenant, bank_id, space, type, text, context, metadata, tags, entities, document_id,
         source_id, batch_id, seq, content_hash, token_count, occurred_at, embedding, body_enc, fts)
       VALUES ${rows.join(',\n')}
       ON CONFLICT (tenant, bank_id, space, content_hash) WHERE source_id IS NULL DO NOTHING
       RETURNING id`,
      params,
    );
    for (const r of returned) inserted.add(r.id);
  }
  // Rows skipped by ON CONFLICT lost a race with a concurrent retain of the same content: answer that row's id.
  const lost = items.filter((m) => !inserted.has(m.id));
  const existing = await findByHashes(tx, p, lost.map((m) => m.contentHash));
  for (const m of items) ids.push(inserted.has(m.id) ? m.id : existing.get(m.contentHash) ?? m.id);
  return ids;
}

export async function getMemory(db: Queryable, tenant: string, bankId: string, id: string): Promise<Memory | undefined> {
  const rows = await db.query<MemoryRow>(
    `SELECT ${MEMORY_COLUMNS} FROM memories WHERE tenant = $1 AND bank_id = $2 AND id = $3`,
    [tenant, bankId, id],
  );
  return rows[0] ? (await rowsToMemories(db, tenant, rows))[0] : undefined;
}

export async function getMemoriesByIds(db: Queryable, tenant: string, ids: string[]): Promise<Map<string, Memory>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query<MemoryRow>(
    `SELECT ${MEMORY_COLUMNS} FROM memories WHERE tenant = $1 AND id = ANY($2::uuid[])`,
    [tenant, ids],
  );
  return new Map((await rowsToMemories(db, tenant, rows)).map((m) => [m.id, m]));
}

export interface ListFilter {
  tenant: string;
  bankId: string;
  space: string | undefined;
  type: string | undefined;
  q: string | undefined;
  tags: string[] | undefined;
  since: Date | undefined;
  until: Date | undefined;
  documentId: string | undefined;
  state: string | undefined;
  limit: number;
  offset: number;
}

export async function listMemories(db: Queryable, f: ListFilter): Promise<{ items: Memory[]; total: number }> {
  const where = ['tenant = $1', 'bank_id = $2'];
  const params: SqlParam[] = [f.tenant, f.bankId];
  const add = (clause: (placeholder: string) => string, value: SqlParam) => {
    params.push(value);
    where.push(clause(`$${params.length}`));
  };
  if (f.space !== undefined) add((x) => `space = ${x}`, f.space);
  if (f.type !== undefined) add((x) => `type = ${x}`, f.type);
  const codec = codecFor(db);
  if (f.q !== undefined && f.q.trim() !== '' && !codec.encrypted) {
    add((x) => `(fts @@ plainto_tsquery('english', ${x}) OR text ILIKE '%' || ${x} || '%')`, f.q);
  } else if (f.q !== undefined && f.q.trim() !== '') {
    // Encrypted: every term must match the blind index (no substring match: there is no plaintext to scan).
    const tsq = await codec.keywordQuery(db, f.tenant, [f.bankId], f.q, 'all');
    if (tsq === undefined) where.push('false');
    else add((x) => `fts @@ ${tsq.sql(x)}`, tsq.value);
  }
  if (f.tags !== undefined && f.tags.length > 0) add((x) => `tags && ${x}::text[]`, f.tags);
  if (f.since !== undefined) add((x) => `COALESCE(occurred_at, created_at) >= ${x}`, f.since);
  if (f.until !== undefined) add((x) => `COALESCE(occurred_at, created_at) < ${x}`, f.until);
  if (f.documentId !== undefined) add((x) => `document_id = ${x}`, f.documentId);
  if (f.state !== undefined) add((x) => `state = ${x}`, f.state);
  const whereSql = where.join(' AND ');
  const [count] = await db.query<{ n: number | string }>(`SELECT count(*) AS n FROM memories WHERE ${whereSql}`, params);
  const rows = await db.query<MemoryRow>(
    `SELECT ${MEMORY_COLUMNS} FROM memories WHERE ${whereSql}
     ORDER BY COALESCE(occurred_at, created_at) DESC, created_at DESC, seq DESC, id
     LIMIT $${params.length + 1}::int OFFSET $${params.length + 2}::bigint`,
    [...params, f.limit, f.offset],
  );
  return { items: await rowsToMemories(db, f.tenant, rows), total: Number(count?.n ?? 0) };
}

/** Hard delete; derived facts go with their source (ON DELETE CASCADE). Answers how many rows went. */
export async function deleteMemory(db: Queryable, tenant: string, bankId: string, id: string): Promise<number> {
  const rows = await db.query<{ id: string }>(
    `WITH RECURSIVE doomed AS (
       SELECT id FROM memories WHERE tenant = $1 AND bank_id = $2 AND id = $3
       UNION SELECT m.id FROM memories m JOIN doomed d ON m.source_id = d.id
     )
     DELETE FROM memories WHERE id IN (SELECT id FROM doomed) RETURNING id`,
    [tenant, bankId, id],
  );
  return rows.length;
}

export async function clearMemories(
  db: Queryable,
  tenant: string,
  bankId: string,
  space: string | undefined,
  type: string | undefined,
): Promise<number> {
  const params: SqlParam[] = [tenant, bankId];
  let where = 'tenant = $1 AND bank_id = $2';
  if (space !== undefined) {
    params.push(space);
    where += ` AND space = $${params.length}`;
  }
  if (type !== undefined) {
    params.push(type);
    where += ` AND type = $${params.length}`;
  }
  const rows = await db.query<{ id: string }>(`DELETE FROM memories WHERE ${where} RETURNING id`, params);
  return rows.length;
}

export interface MemoryPatch {
  text?: string;
  embedding?: Float32Array;
  tokenCount?: number;
  contentHash?: string;
  tags?: string[];
  metadata?: Record<string, string>;
  context?: string | null;
  state?: 'valid' | 'invalidated';
  occurredAt?: Date | null;
}

export async function updateMemory(
  db: Database,
  tenant: string,
  bankId: string,
  id: string,
  patch: MemoryPatch,
): Promise<Memory | undefined> {
  const codec = codecFor(db);
  const touchesBody = patch.text !== undefined || patch.context !== undefined || patch.metadata !== undefined;
  if (!codec.encrypted || (!touchesBody && patch.contentHash === undefined)) return applyUpdate(db, tenant, bankId, id, patch);
  // Encrypted: the body is one ciphertext, so an edit reads it, merges the change and seals it again.
  return db.transaction(async (tx) => {
    const [row] = await tx.query<MemoryRow>(
      `SELECT ${MEMORY_COLUMNS} FROM memories WHERE tenant = $1 AND bank_id = $2 AND id = $3 FOR UPDATE`,
      [tenant, bankId, id],
    );
    if (!row) return undefined;
    const [current] = await rowsToMemories(tx, tenant, [row]);
    if (!current) throw new IntegrityError(`memory ${id} failed to decrypt (tampered or moved); it was not changed`);
    const bank = await codecFor(tx).forWrite(tx, tenant, bankId);
    const sealed = bank.seal(id, {
      text: patch.text ?? current.text,
      context: patch.context !== undefined ? patch.context : current.context,
      metadata: patch.metadata ?? current.metadata,
      entities: current.entities,
    });
    return applyUpdate(tx, tenant, bankId, id, {
      ...patch,
      ...(patch.contentHash !== undefined ? { contentHash: bank.dedupHash(patch.contentHash) } : {}),
      sealed,
    });
  });
}

async function applyUpdate(
  db: Queryable,
  tenant: string,
  bankId: string,
  id: string,
  patch: MemoryPatch & { sealed?: SealedBody },
): Promise<Memory | undefined> {
  const sets: string[] = ['updated_at = now()'];
  const params: SqlParam[] = [tenant, bankId, id];
  const set = (column: string, value: SqlParam, cast = '') => {
    params.push(value);
    sets.push(`${column} = $${params.length}${cast}`);
  };
  if (patch.sealed !== undefined) {
    sets.push("text = NULL, context = NULL, metadata = '{}'::jsonb");
    set('entities', patch.sealed.entities, '::text[]');
    set('body_enc', patch.sealed.bodyEnc);
    set('fts', patch.sealed.fts ?? '', '::tsvector');
  } else {
    if (patch.text !== undefined) {
      set('text', patch.text);
      sets.push(`fts = ${documentTsvectorSql(`$${params.length}`)}`);
    }
    if (patch.metadata !== undefined) set('metadata', JSON.stringify(patch.metadata), '::jsonb');
    if (patch.context !== undefined) set('context', patch.context);
  }
  if (patch.embedding !== undefined) set('embedding', toVectorLiteral(patch.embedding), '::vector');
  if (patch.tokenCount !== undefined) set('token_count', patch.tokenCount);
  if (patch.contentHash !== undefined) set('content_hash', patch.contentHash);
  if (patch.tags !== undefined) set('tags', patch.tags, '::text[]');
  if (patch.state !== undefined) set('state', patch.state);
  if (patch.occurredAt !== undefined) set('occurred_at', patch.occurredAt);
  const rows = await db.query<MemoryRow>(
    `UPDATE memories SET ${sets.join(', ')} WHERE tenant = $1 AND bank_id = $2 AND id = $3 RETURNING ${MEMORY_COLUMNS}`,
    params,
  );
  return rows[0] ? (await rowsToMemories(db, tenant, rows))[0] : undefined;
}

export { ORG_BANK_ID };
