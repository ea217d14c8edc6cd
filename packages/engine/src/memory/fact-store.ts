import type { Queryable } from '../db/database.js';
import type { Partition } from './types.js';

/** A fact already in the bank, as an extraction shows it to the LLM. */
export interface ExistingFact {
  id: string;
  text: string | null;
  type: string;
  occurred_at: Date | string | null;
}

/**
 * The current facts of the partition nearest to a memory by embedding, not derived from it: the facts an extraction
 * of that memory may confirm or correct.
 */
export function nearestFacts(
  q: Queryable,
  partition: Partition,
  sourceId: string,
  limit: number,
): Promise<ExistingFact[]> {
  return q.query<ExistingFact>(
    `SELECT id, text, type, occurred_at FROM memories
     WHERE tenant = $1 AND bank_id = $2 AND space = $3 AND type <> 'raw' AND superseded_by IS NULL AND state = 'valid'
       AND source_id IS DISTINCT FROM $4::uuid
     ORDER BY embedding <=> (SELECT embedding FROM memories WHERE tenant = $1 AND id = $4::uuid) LIMIT ${Math.trunc(limit)}`,
    [partition.tenant, partition.bankId, partition.space, sourceId],
  );
}

/** True while the memory is stored (a delete may land while its facts are being extracted). */
export async function memoryExists(q: Queryable, tenant: string, id: string): Promise<boolean> {
  return (await q.query('SELECT 1 FROM memories WHERE tenant = $1 AND id = $2', [tenant, id])).length > 0;
}

/** Marks `ids` as superseded by the fact `byId` from `at` (now when unknown); facts already superseded stay as they are. */
export async function supersedeFacts(
  q: Queryable,
  tenant: string,
  bankId: string,
  ids: readonly string[],
  byId: string,
  at: Date | null,
): Promise<void> {
  await q.query(
    `UPDATE memories SET superseded_by = $4, valid_to = COALESCE($5, now()), updated_at = now()
     WHERE tenant = $1 AND bank_id = $2 AND id = ANY($3::uuid[]) AND superseded_by IS NULL`,
    [tenant, bankId, [...ids], byId, at],
  );
}
