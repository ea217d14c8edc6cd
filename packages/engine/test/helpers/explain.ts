import type { Database, SqlParam } from '../../src/db/database.js';

/**
 * The scan lines of a statement's plan with sequential scans, bitmap scans and sorts priced out: on the small tables
 * of a test the planner prefers those, so this shows whether an index can answer the statement.
 */
export async function indexPlanScans(db: Database, sql: string, params: readonly SqlParam[]): Promise<string> {
  const plan = await db.transaction(async (tx) => {
    await tx.query('SET LOCAL enable_seqscan = off');
    await tx.query('SET LOCAL enable_bitmapscan = off');
    await tx.query('SET LOCAL enable_sort = off');
    return tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params);
  });
  return plan.map((r) => r['QUERY PLAN']).join('\n');
}
