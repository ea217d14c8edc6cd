/**
 * 007: the Postgres tier's vector index: one HNSW index (cosine) over every memory's embedding, searched with
 * pgvector's iterative scans filtered by tenant, bank and space (docs/decisions.md has why one index and not one per
 * bank). It is not in the migration transaction: the embedding column it indexes is added at run time once the model's
 * dimension is known (embedding-schema.ts), and on a server it is built with CREATE INDEX CONCURRENTLY, which cannot
 * run inside a transaction. db/recall-index.ts builds it when the engine starts, and again after `mnemos reembed`
 * replaces the column (the index goes with the column it was built on, so it always has the column's dimension).
 */

/** The index's name. */
export const RECALL_INDEX = 'memories_embedding_hnsw';

/**
 * The statement that builds the index; `concurrently`: without blocking writes (a server: it takes longer, and
 * cannot run inside a transaction).
 */
export function recallIndexSql(concurrently: boolean): string {
  return `CREATE INDEX ${concurrently ? 'CONCURRENTLY ' : ''}IF NOT EXISTS ${RECALL_INDEX}
    ON memories USING hnsw (embedding vector_cosine_ops)`;
}
