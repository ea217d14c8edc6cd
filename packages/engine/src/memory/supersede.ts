import type { Queryable } from '../db/database.js';
import { validFromSql } from './validity-sql.js';
import type { Partition } from './types.js';

/** Of `ids`, those that name no memory of the partition (the bank and space): a retain refuses to supersede them. */
export async function unknownMemories(q: Queryable, p: Partition, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await q.query<{ id: string }>(
    `SELECT id::text AS id FROM memories WHERE tenant = $1 AND bank_id = $2 AND space = $3 AND id = ANY($4::uuid[])`,
    [p.tenant, p.bankId, p.space, [...new Set(ids)]],
  );
  const known = new Set(rows.map((r) => r.id));
  return [...new Set(ids)].filter((id) => !known.has(id.toLowerCase()));
}

/**
 * Closes the validity of the partition's memories `ids` at the valid_from of `byId` and names it as their successor
 * (a memory never supersedes itself). A memory already superseded is superseded again: the caller says which memory
 * replaces it now.
 */
export async function supersedeMemories(
  q: Queryable,
  p: Partition,
  ids: readonly string[],
  byId: string,
): Promise<void> {
  if (ids.length === 0) return;
  await q.query(
    `UPDATE memories o SET superseded_by = n.id, valid_to = ${validFromSql('n.')}, updated_at = now()
     FROM memories n
     WHERE n.tenant = $1 AND n.id = $4::uuid
       AND o.tenant = $1 AND o.bank_id = $2 AND o.space = $3 AND o.id = ANY($5::uuid[]) AND o.id <> n.id`,
    [p.tenant, p.bankId, p.space, byId, [...new Set(ids)]],
  );
}
