import type { Database, Queryable, SqlParam } from '../db/database.js';
import { toVectorLiteral } from '../db/database.js';
import { documentTsvectorSql } from '../recall/keyword.js';
import type { Memory, MemoryType, NewMemory, Partition } from './types.js';
import { ORG_BANK_ID } from './types.js';

/** Columns read for a memory; `body_enc` is there for encryption at rest. */
export const MEMORY_COLUMNS = `id, bank_id, space, type, text, context, metadata, body_enc, tags, entities, document_id,
  source_id, occurred_at, created_at, updated_at, state, superseded_by, valid_to`;

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

export function rowToMemory(row: MemoryRow): Memory {
  return {
    id: row.id,
    bank_id: row.bank_id,
    space: row.space,
    type: row.type as MemoryType,
    text: row.text ?? '',
    context: row.context,
    metadata: row.metadata ?? {},
    tags: row.tags,
    entities: row.entities,
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

/** Ids already stored for these content hashes in the partition (retain is idempotent on identical content). */
export async function findByHashes(db: Queryable, p: Partition, hashes: string[]): Promise<Map<string, string>> {
  if (hashes.length === 0) return new Map();
  const rows = await db.query<{ id: string; content_hash: string }>(
    `SELECT id, content_hash FROM memories
     WHERE tenant = $1 AND bank_id = $2 AND space = $3 AND source_id IS NULL AND content_hash = ANY($4::text[])`,
    [p.tenant, p.bankId, p.space, hashes],
  );
  return new Map(rows.map((r) => [r.content_hash, r.id]));
}

/** Inserts memories; a concurrent retain of the same content wins the race and its id is returned instead. */
export async function insertMemories(
  tx: Queryable,
  p: Partition,
  items: ReadonlyArray<NewMemory & { embedding: Float32Array }>,
): Promise<string[]> {
  const ids: string[] = [];
  for (const m of items) {
    const params: SqlParam[] = [
      m.id, p.tenant, p.bankId, p.space, m.type, m.text, m.context, JSON.stringify(m.metadata), m.tags, m.entities,
      m.documentId, m.sourceId, m.batchId, m.seq, m.contentHash, m.tokenCount, m.occurredAt,
      toVectorLiteral(m.embedding),
    ];
    const inserted = await tx.query<{ id: string }>(
      `INSERT INTO memories (id, tenant, bank_id, space, type, text, context, metadata, tags, entities, document_id,
         source_id, batch_id, seq, content_hash, token_count, occurred_at, embedding, fts)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::text[], $10::text[], $11, $12, $13, $14, $15, $16, $17,
         $18::vector, ${documentTsvectorSql('$6')})
       ON CONFLICT (tenant, bank_id, space, content_hash) WHERE source_id IS NULL DO NOTHING
       RETURNING id`,
      params,
    );
    if (inserted[0]) {
      ids.push(inserted[0].id);
    } else {
      const existing = await findByHashes(tx, p, [m.contentHash]);
      ids.push(existing.get(m.contentHash) ?? m.id);
    }
  }
  return ids;
}

export async function getMemory(db: Queryable, tenant: string, bankId: string, id: string): Promise<Memory | undefined> {
  const rows = await db.query<MemoryRow>(
    `SELECT ${MEMORY_COLUMNS} FROM memories WHERE tenant = $1 AND bank_id = $2 AND id = $3`,
    [tenant, bankId, id],
  );
  return rows[0] ? rowToMemory(rows[0]) : undefined;
}

export async function getMemoriesByIds(db: Queryable, tenant: string, ids: string[]): Promise<Map<string, Memory>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query<MemoryRow>(
    `SELECT ${MEMORY_COLUMNS} FROM memories WHERE tenant = $1 AND id = ANY($2::uuid[])`,
    [tenant, ids],
  );
  return new Map(rows.map((r) => [r.id, rowToMemory(r)]));
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
  if (f.q !== undefined && f.q.trim() !== '') {
    add((x) => `(fts @@ plainto_tsquery('english', ${x}) OR text ILIKE '%' || ${x} || '%')`, f.q);
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
     LIMIT ${Math.trunc(f.limit)} OFFSET ${Math.trunc(f.offset)}`,
    params,
  );
  return { items: rows.map(rowToMemory), total: Number(count?.n ?? 0) };
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
  const sets: string[] = ['updated_at = now()'];
  const params: SqlParam[] = [tenant, bankId, id];
  const set = (column: string, value: SqlParam, cast = '') => {
    params.push(value);
    sets.push(`${column} = $${params.length}${cast}`);
  };
  if (patch.text !== undefined) {
    set('text', patch.text);
    sets.push(`fts = ${documentTsvectorSql(`$${params.length}`)}`);
  }
  if (patch.embedding !== undefined) set('embedding', toVectorLiteral(patch.embedding), '::vector');
  if (patch.tokenCount !== undefined) set('token_count', patch.tokenCount);
  if (patch.contentHash !== undefined) set('content_hash', patch.contentHash);
  if (patch.tags !== undefined) set('tags', patch.tags, '::text[]');
  if (patch.metadata !== undefined) set('metadata', JSON.stringify(patch.metadata), '::jsonb');
  if (patch.context !== undefined) set('context', patch.context);
  if (patch.state !== undefined) set('state', patch.state);
  if (patch.occurredAt !== undefined) set('occurred_at', patch.occurredAt);
  const rows = await db.query<MemoryRow>(
    `UPDATE memories SET ${sets.join(', ')} WHERE tenant = $1 AND bank_id = $2 AND id = $3 RETURNING ${MEMORY_COLUMNS}`,
    params,
  );
  return rows[0] ? rowToMemory(rows[0]) : undefined;
}

export { ORG_BANK_ID };
