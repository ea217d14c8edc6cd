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
 * cannot run inside a transaction). It is built on the partition that holds the bank's rows (`part`, migration 019):
 * its own, which holds its rows alone, or the shared one (Postgres builds no index of a partitioned table
 * concurrently). Either way it is partial on the bank, named with constants: a query with the same equalities
 * (parameters are planned with their values) is answered from it, and a query for another bank never is. On a
 * partition of its own an index over the whole partition would be the same index, but a recall of any other bank
 * would search it too (the planner reads every partition), finding nothing of that bank in it after reading far.
 */
export function bankIndexSql(tenant: string, bankId: string, concurrently: boolean, part = 0): string {
  return `CREATE INDEX ${concurrently ? 'CONCURRENTLY ' : ''}IF NOT EXISTS ${bankIndexName(tenant, bankId)}
    ON ${part === 0 ? 'memories_shared' : bankPartitionName(part)} USING hnsw (embedding vector_cosine_ops)
    WHERE tenant = ${literal(tenant)} AND bank_id = ${literal(bankId)}`;
}
