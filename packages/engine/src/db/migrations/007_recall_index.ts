import { createHash } from 'node:crypto';
import { bankPartitionName } from '../bank-partition.js';

/**
 * 007: the Postgres tier's vector indexes: one HNSW index (cosine) per large bank, partial on its tenant and bank id
 * (docs/decisions.md has why not one index over every bank: on the embedded database an HNSW index made each insert
 * about ten times slower, a cost every retain into every bank would pay). They are not in the migration transaction:
 * the embedding column they index is added at run time once the model's dimension is known (embedding-schema.ts), a
 * bank gets its index only once it is large enough for the Postgres tier, and on a server the index is built with
 * CREATE INDEX CONCURRENTLY, which cannot run inside a transaction. db/recall-index.ts builds them. An index goes with
 * the column it was built on (`mnemos reembed` replaces the column), so it always has the column's dimension.
 */

/** The name of a bank's vector index: a digest of the tenant and bank id (any text) within Postgres's 63 bytes. */
export function bankIndexName(tenant: string, bankId: string): string {
  const digest = createHash('sha256').update(`${tenant}\u0000${bankId}`).digest('hex').slice(0, 32);
  return `memories_hnsw_${digest}`;
}

/** A text value as an SQL literal (standard_conforming_strings, on since Postgres 9.1: only quotes are doubled). */
function literal(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/**
 * The statement that builds a bank's index; `concurrently`: without blocking writes (a server: it takes longer, and
 * cannot run inside a transaction). A bank in a partition of its own (`part`, migration 019) gets an index of that
 * partition, which holds its rows alone. A bank in the shared partition gets a partial index there: the predicate
 * names the bank with constants, and a query with the same equalities (parameters are planned with their values) is
 * answered from it; it is built on the partition, not the partitioned table, as Postgres builds no index of a
 * partitioned table concurrently.
 */
export function bankIndexSql(tenant: string, bankId: string, concurrently: boolean, part = 0): string {
  const build = `CREATE INDEX ${concurrently ? 'CONCURRENTLY ' : ''}IF NOT EXISTS ${bankIndexName(tenant, bankId)}`;
  if (part !== 0) return `${build} ON ${bankPartitionName(part)} USING hnsw (embedding vector_cosine_ops)`;
  return `${build} ON memories_shared USING hnsw (embedding vector_cosine_ops)
    WHERE tenant = ${literal(tenant)} AND bank_id = ${literal(bankId)}`;
}
