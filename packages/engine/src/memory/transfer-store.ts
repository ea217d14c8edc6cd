import sql, { raw } from 'sql-template-tag';
import type { Queryable } from '../db/database.js';
import { MEMORY_COLUMNS, type MemoryReader, type MemoryRow } from './rows.js';
import { run } from './sql.js';
import { selectionSql, type BankSelection } from './store.js';
import type { BatchPlace, ExportedMemory } from './types.js';
import { unexpiredSql } from './validity-sql.js';

/**
 * Where an export page starts: after this row of the export order, which is every retained memory by id, then every
 * fact by id, so an import meets a fact's source before the fact.
 */
export interface ExportKey {
  fact: boolean;
  id: string;
}

/**
 * One page of a bank's memories in export order, read by keyset (an index range, however deep the page), and the key
 * of its last row; no key means the bank has no more. Rows that fail to open (tampered, moved) and memories expired at
 * `now` (forgotten, whether or not the expiry job has deleted them yet) are left out.
 */
export async function exportPage(
  db: Queryable,
  reader: MemoryReader,
  selection: BankSelection,
  after: ExportKey | undefined,
  limit: number,
  now: Date,
): Promise<{ memories: ExportedMemory[]; last: ExportKey | undefined }> {
  const start =
    after === undefined ? sql`` : sql` AND (source_id IS NOT NULL, id) > (${after.fact}, ${after.id}::uuid)`;
  const rows = await run<MemoryRow & { batch_id: string | null; seq: number; unexpired: boolean }>(
    db,
    sql`SELECT ${raw(MEMORY_COLUMNS)}, batch_id::text AS batch_id, seq, ${unexpiredSql(now)} AS unexpired
    FROM memories WHERE ${selectionSql(selection)}${start}
    ORDER BY source_id IS NOT NULL, id LIMIT ${limit}::int`,
  );
  const end = rows.at(-1);
  const last = end === undefined || rows.length < limit ? undefined : { fact: end.source_id !== null, id: end.id };
  const places = new Map<string, BatchPlace | null>(
    rows.map((r) => [r.id, r.batch_id === null ? null : { batchId: r.batch_id, seq: r.seq }]),
  );
  // The page's end is read before expired rows go, so a page of only expired rows still moves the export on.
  const memories = await reader.open(
    db,
    selection.tenant,
    rows.filter((r) => r.unexpired),
  );
  return { memories: memories.map((memory) => ({ memory, place: places.get(memory.id) ?? null })), last };
}

/** The bank of each id the tenant holds a memory under (ids are unique per tenant). */
export async function banksOfIds(db: Queryable, tenant: string, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await run<{ id: string; bank_id: string }>(
    db,
    sql`SELECT id::text AS id, bank_id FROM memories WHERE tenant = ${tenant} AND id = ANY(${[...new Set(ids)]}::uuid[])`,
  );
  return new Map(rows.map((r) => [r.id, r.bank_id]));
}
