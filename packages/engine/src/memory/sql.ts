import type { Sql } from 'sql-template-tag';
import type { Queryable, SqlParam } from '../db/database.js';

/**
 * Runs a statement built with sql-template-tag, which numbers the placeholders. Its values are typed `unknown`; the
 * store interpolates only SqlParam values.
 */
export function run<T extends object>(q: Queryable, statement: Sql): Promise<T[]> {
  return q.query<T>(statement.text, statement.values as SqlParam[]);
}
