import sql, { raw, type Sql } from 'sql-template-tag';
import type { Validity } from '../filters/validity.js';

/** The effective valid_from of a row of `memories` under `alias`. */
export const validFromSql = (alias: string): string =>
  `COALESCE(${alias}valid_from, ${alias}occurred_at, ${alias}created_at)`;

/** An instant as a parameter: ISO text, read as a timestamptz. */
const instant = (at: Date): Sql => sql`${at.toISOString()}::timestamptz`;

/** A column of `memories` under `alias` (with its dot, or '' unaliased). */
const column = (alias: string, name: string): Sql => raw(`${alias}${name}`);

/** A row of `memories` under `alias` that has not expired at `now` (filters/validity.ts). */
export const unexpiredSql = (now: Date, alias = ''): Sql =>
  sql`(${column(alias, 'expires_at')} IS NULL OR ${column(alias, 'expires_at')} > ${instant(now)})`;

/**
 * The validity rule as an SQL condition over `memories` under `alias` (with its dot, or '' unaliased). "Current" is
 * judged by the database's clock, as the writers that close a validity do; expiry by the read's instant (the engine's
 * clock). The instants are parameters, so a statement's text is the same at every call and its plan can be kept.
 */
export function validitySql(v: Validity, alias = ''): Sql {
  const unexpired = unexpiredSql(v.now, alias);
  const validTo = column(alias, 'valid_to');
  switch (v.kind) {
    case 'all':
      return unexpired;
    case 'current':
      return sql`(${validTo} IS NULL OR ${validTo} > now()) AND ${unexpired}`;
    case 'asOf': {
      const at = instant(v.at);
      return sql`(${raw(validFromSql(alias))} <= ${at} AND (${validTo} IS NULL OR ${validTo} > ${at})) AND ${unexpired}`;
    }
  }
}
