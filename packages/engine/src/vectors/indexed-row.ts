import type { Memory } from '../memory/types.js';
import { MEMORY_COLUMNS, type MemoryRow } from '../memory/rows.js';
import { binaryHalfVectorSql, binaryVectorSql } from '../db/vector-copy.js';
import type { VectorRowMeta } from './bank-vectors.js';

/** A memory row as the bank indexes read it: every memory column plus what recall ranks by. */
export interface IndexedRow extends MemoryRow {
  batch_id: string | null;
  seq: number | null;
  occurred_ms: string | number | null;
  fts: string | null;
  token_count: number | null;
  /** The vector as binaryVectorSql's text (vectorFromBase64 reads it). */
  embedding: string | null;
}

/**
 * The select list of an IndexedRow (from `memories`, unaliased). The vector comes in binary (binaryVectorSql): its
 * text form costs the database a formatting of every float and the reader a JSON parse. A whole bank's load reads
 * these as one JSON text per row (`to_json(alias)::text` over a subquery that selects them; see indexedRowFromJson):
 * as ~25 columns, the embedded database's client slices, decodes and parses each field in JavaScript on its thread
 * and clones the row object to this one; as one text, that is one string, parsed here by the native JSON parser.
 */
export const INDEXED_COLUMNS = `${MEMORY_COLUMNS}, batch_id::text AS batch_id, seq,
  (extract(epoch FROM occurred_at) * 1000)::float8 AS occurred_ms, fts::text AS fts, token_count,
  ${binaryVectorSql('embedding')} AS embedding`;

/** How a read carries vectors: as stored (float), or rounded to half floats (half the bytes; see vector-copy.ts). */
export type VectorPrecision = 'float' | 'half';

/** INDEXED_COLUMNS with the vector in half floats (read with vectorFromHalfBase64). */
const INDEXED_COLUMNS_HALF = INDEXED_COLUMNS.replace(binaryVectorSql('embedding'), binaryHalfVectorSql('embedding'));

/** INDEXED_COLUMNS with the vector at this precision. */
export function indexedColumns(precision: VectorPrecision): string {
  return precision === 'float' ? INDEXED_COLUMNS : INDEXED_COLUMNS_HALF;
}

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

/** A row of INDEXED_COLUMNS as JSON: bytea comes as `\\x` and hex digits. */
interface JsonIndexedRow extends Omit<IndexedRow, 'body_enc'> {
  body_enc: string | Uint8Array | null;
}

/** A row of INDEXED_COLUMNS read as one JSON text. */
export function indexedRowFromJson(text: string): IndexedRow {
  return fromJsonRow(JSON.parse(text) as JsonIndexedRow);
}

/** Rows of INDEXED_COLUMNS read as one JSON array (`json_agg`). */
export function indexedRowsFromJson(text: string): IndexedRow[] {
  return (JSON.parse(text) as JsonIndexedRow[]).map(fromJsonRow);
}

function fromJsonRow(row: JsonIndexedRow): IndexedRow {
  if (typeof row.body_enc === 'string') row.body_enc = Buffer.from(row.body_enc.slice(2), 'hex');
  return row as IndexedRow;
}
