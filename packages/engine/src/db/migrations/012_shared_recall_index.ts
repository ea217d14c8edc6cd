/**
 * 012: on a PostgreSQL server, the Postgres tier's vectors are searched through one HNSW index (cosine) over every
 * bank, filtered to the bank by pgvector's iterative scan, in place of a partial index per large bank (migration 007):
 * a partial index's build reads the whole `memories` table, every tenant's rows, once per bank, where this one is
 * built once and then kept by the inserts (docs/decisions.md has the measurements and the cost: each insert into any
 * bank updates the graph). The embedded database keeps 007's per-bank indexes: there an HNSW insert runs in
 * WebAssembly on the one connection, a cost only the banks searched in Postgres should pay.
 *
 * Like 007 it is not in the migration transaction: the embedding column it indexes is added at run time once the
 * model's dimension is known, and on a server it is built with CREATE INDEX CONCURRENTLY, which cannot run inside a
 * transaction; db/recall-index.ts builds it when a recall first needs it and then drops 007's indexes. `mnemos reembed`
 * replaces the column and the index goes with it; it is built again on the new column.
 */

/** The shared index's name. */
export const SHARED_INDEX_NAME = 'memories_embedding_hnsw';

/** The statement that builds it; `concurrently`: without blocking writes (cannot run inside a transaction). */
export function sharedIndexSql(concurrently: boolean): string {
  return `CREATE INDEX ${concurrently ? 'CONCURRENTLY ' : ''}IF NOT EXISTS ${SHARED_INDEX_NAME}
    ON memories USING hnsw (embedding vector_cosine_ops)`;
}

/** The per-bank indexes of migration 007 by their names' prefix (LIKE pattern). */
export const BANK_INDEX_PATTERN = 'memories\\_hnsw\\_%';
