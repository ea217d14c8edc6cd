import type { Memory } from '../../memory/types.js';
import { MEMORY_COLUMNS, type MemoryRow } from '../../memory/rows.js';
import { binaryVectorSql } from '../../db/vector-copy.js';
import { validFromSql } from '../../memory/validity-sql.js';

/** What recall filters on, kept beside each vector so filtering needs no database round trip. */
export interface VectorRowMeta {
  id: string;
  bankId: string;
  space: string;
  type: string;
  valid: boolean;
  superseded: boolean;
  /** The validity interval in epoch milliseconds (filters/validity.ts); validTo null while current. */
  validFrom: number;
  validTo: number | null;
  /** When it expires, in epoch milliseconds; null: never. */
  expiresAt: number | null;
  tags: string[];
  /** The retain call that stored it, and its position there: neighbours are seq - 1 and seq + 1 in one batch. */
  batchId: string | null;
  seq: number;
  documentId: string | null;
  /** occurred_at in epoch milliseconds, or null when the memory has no date. */
  occurredAt: number | null;
  /** Keyword-index terms in the text (lexemes, or blind tokens under encryption), repeats counted. */
  length: number;
  /** The memory's text in cl100k tokens (for max_tokens budgets). */
  tokenCount: number;
  /** The memory as the API shows it (bodies already opened), so recall needs no database read to answer. */
  memory: Memory;
  /**
   * The text's word signature for near-copy checks (recall/signals.ts wordSignature), computed the first time the
   * memory is a recall candidate and kept with the row (about 60 bytes for a short memory).
   */
  nearCopySignature?: Uint32Array | undefined;
  /** The text's speaker prefix (recall/signals.ts speakerOf), computed and kept like `nearCopySignature`. */
  speaker?: string | null | undefined;
}

/** A memory's keyword-index terms, read from the bank's term index (kernels/term-index.ts). */
export interface KeywordDoc {
  /** Terms in the text, repeats counted. */
  length: number;
  /** How often the text holds `term` (0 when it does not). */
  get(term: string): number;
  /** Every term with its count. */
  terms(): ReadonlyMap<string, number>;
}

/** The keyword view of a memory no bank holds (no terms). */
export const NO_KEYWORDS: KeywordDoc = { length: 0, get: () => 0, terms: () => new Map() };

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

/** Every column of IndexedRow but the vector. */
const RANKED_COLUMNS = `${MEMORY_COLUMNS}, batch_id::text AS batch_id, seq,
  (extract(epoch FROM occurred_at) * 1000)::float8 AS occurred_ms, fts::text AS fts, token_count`;

/**
 * The select list of an IndexedRow (from `memories`, unaliased). The vector comes in binary (binaryVectorSql): its
 * text form costs the database a formatting of every float and the reader a JSON parse. A whole bank's load reads
 * these as one JSON text per row (`to_json(alias)::text` over a subquery that selects them; see indexedRowFromJson):
 * as ~25 columns, the embedded database's client slices, decodes and parses each field in JavaScript on its thread
 * and clones the row object to this one; as one text, that is one string, parsed here by the native JSON parser.
 */
export const INDEXED_COLUMNS = `${RANKED_COLUMNS}, ${binaryVectorSql('embedding')} AS embedding`;

/** A memory row as recall's pool reads it: its vector's cosine with the query (null without one), not the vector. */
export interface PooledIndexedRow extends Omit<IndexedRow, 'embedding'> {
  cosine: number | null;
  /** Set by reads that return an arm's hits with their neighbours: whether the row is a hit. */
  hit?: boolean;
  /** Set by reads asked for the vectors too: the row's address and partition, by which the statement reads its vector. */
  row_tid?: string;
  row_table?: number;
}

/**
 * The select list of a PooledIndexedRow (from `memories` as `m`), the query's vector in the parameter `query` names: the
 * database computes each cosine from the stored floats, so no vector is encoded, sent or decoded unless `vectors` asks
 * for them too (a recall that reorders by them: recall/recency.ts); then each row brings its address, by which the
 * statement reads the vectors beside the rows (PostgresBankIndex.pooled).
 */
export function pooledColumns(query: string, vectors = false): string {
  return pooledColumnsWithCosine(cosineSql('embedding', query), vectors);
}

/**
 * As pooledColumns, the cosine taken from `cosine` (SQL naming one computed already by cosineSql): a read that ranked
 * the rows by their vectors does not open each kept row's vector a second time.
 */
export function pooledColumnsWithCosine(cosine: string, vectors = false): string {
  return `${RANKED_COLUMNS}, ${cosine} AS cosine${vectors ? ', m.ctid AS row_tid, m.tableoid AS row_table' : ''}`;
}

/** The cosine of the vector in `column` with the one in the parameter `query`, as every pooled read computes it. */
export function cosineSql(column: string, query: string): string {
  return `(1 - (${column} <=> ${query}::vector))::float8`;
}

/** What recall filters and ranks a row by, with the memory opened from it and its keyword-index length. */
export function indexedRowMeta(
  row: Omit<IndexedRow, 'embedding'>,
  memory: Memory,
  keywordLength: number,
): VectorRowMeta {
  return {
    id: row.id,
    bankId: row.bank_id,
    space: row.space,
    type: row.type,
    valid: row.state === 'valid',
    superseded: row.superseded_by !== null,
    validFrom: Date.parse(memory.validFrom),
    validTo: memory.validTo === null ? null : Date.parse(memory.validTo),
    expiresAt: memory.expiresAt === null ? null : Date.parse(memory.expiresAt),
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

/** A row as JSON: bytea comes as `\\x` and hex digits. */
type Json<Row extends { body_enc: Uint8Array | null }> = Omit<Row, 'body_enc'> & {
  body_enc: string | Uint8Array | null;
};

/** A row of INDEXED_COLUMNS read as one JSON text. */
export function indexedRowFromJson(text: string): IndexedRow {
  return fromJsonRow(JSON.parse(text) as Json<IndexedRow>);
}

/** Rows of pooledColumns read as one JSON array (`json_agg`). */
export function pooledRowsFromJson(text: string): PooledIndexedRow[] {
  return (JSON.parse(text) as Array<Json<PooledIndexedRow>>).map(fromJsonRow);
}

function fromJsonRow<Row extends { body_enc: Uint8Array | null }>(row: Json<Row>): Row {
  if (typeof row.body_enc === 'string') row.body_enc = Buffer.from(row.body_enc.slice(2), 'hex');
  return row as Row;
}

/** What the compact copy keeps of a memory: what recall filters on and what BM25 needs besides the terms. */
export interface CompactRow {
  id: string;
  space: string;
  type: string;
  valid: boolean;
  tags: readonly string[];
  /** occurred_at in epoch milliseconds, or null. */
  occurredAt: number | null;
  /** Keyword-index terms in the text, repeats counted. */
  length: number;
  /** The validity interval in epoch milliseconds (filters/validity.ts); validTo null while current. */
  validFrom: number;
  validTo: number | null;
  /** When it expires, in epoch milliseconds; null: never. */
  expiresAt: number | null;
  /**
   * Where the row was read ('(block,offset)', its ctid): the database finds the row there without the id index, while
   * no rewrite of the table moved it (a change to the memory makes a new row, which the copy reads with its address).
   */
  address?: string;
}

/** A memory row as a compact copy reads it: no bodies, only what the copy keeps. */
export type CompactSource = Pick<
  IndexedRow,
  'id' | 'space' | 'type' | 'state' | 'tags' | 'occurred_ms' | 'fts' | 'embedding'
> & {
  valid_from_ms: number | string;
  valid_to_ms: number | string | null;
  expires_ms: number | string | null;
  address: string;
};

/** The select list of a CompactSource (from `memories`, unaliased); the vector in binary, as the full copy reads it. */
export const COMPACT_COLUMNS = `id, space, type, state, tags,
  (extract(epoch FROM occurred_at) * 1000)::float8 AS occurred_ms, fts::text AS fts,
  (extract(epoch FROM ${validFromSql('')}) * 1000)::float8 AS valid_from_ms,
  (extract(epoch FROM valid_to) * 1000)::float8 AS valid_to_ms,
  (extract(epoch FROM expires_at) * 1000)::float8 AS expires_ms, ctid::text AS address,
  ${binaryVectorSql('embedding')} AS embedding`;

/** What a bank's compact copy keeps of a row, given its keyword-index length. */
export function compactRow(row: CompactSource, keywordLength: number): CompactRow {
  return {
    id: row.id,
    space: row.space,
    type: row.type,
    valid: row.state === 'valid',
    tags: row.tags,
    occurredAt: row.occurred_ms === null ? null : Number(row.occurred_ms),
    length: keywordLength,
    validFrom: Number(row.valid_from_ms),
    validTo: row.valid_to_ms === null ? null : Number(row.valid_to_ms),
    expiresAt: row.expires_ms === null ? null : Number(row.expires_ms),
    address: row.address,
  };
}
