import type { Memory } from '../memory/types.js';
import { MEMORY_COLUMNS, type MemoryRow } from '../memory/rows.js';
import type { VectorRowMeta } from './bank-vectors.js';

/** A memory row as the bank indexes read it: every memory column plus what recall ranks by. */
export interface IndexedRow extends MemoryRow {
  batch_id: string | null;
  seq: number | null;
  occurred_ms: string | number | null;
  fts: string | null;
  token_count: number | null;
  embedding: string | null;
}

/** The select list of an IndexedRow (from `memories`, unaliased). */
export const INDEXED_COLUMNS = `${MEMORY_COLUMNS}, batch_id::text AS batch_id, seq,
  (extract(epoch FROM occurred_at) * 1000)::float8 AS occurred_ms, fts::text AS fts, token_count,
  embedding::text AS embedding`;

/** What recall filters and ranks a row by, with the memory opened from it and its keyword-index length. */
export function indexedRowMeta(row: IndexedRow, memory: Memory, keywordLength: number): VectorRowMeta {
  return {
    id: row.id,
    bankId: row.bank_id,
    space: row.space,
    type: row.type,
    valid: row.state === 'valid',
    superseded: row.superseded_by !== null,
    tags: row.tags,
    batchId: row.batch_id,
    seq: row.seq ?? 0,
    documentId: row.document_id,
    occurredAt: row.occurred_ms === null ? null : Number(row.occurred_ms),
    tokenCount: row.token_count ?? 0,
    memory,
    length: keywordLength,
    // Set here so every row has the same shape; filled by the first recall that considers the memory.
    nearCopySignature: undefined,
    speaker: undefined,
  };
}
