import sql, { raw, type Sql } from 'sql-template-tag';
import type { Validity } from '../filters/validity.js';

/** The effective valid_from of a row of `memories` under `alias`. */
export const validFromSql = (alias: string): string =>
  `COALESCE(${alias}valid_from, ${alias}occurred_at, ${alias}created_at)`;

/** An instant as an SQL literal: ISO text from a Date, so nothing of a caller's text. */
const instantSql = (at: Date): string => `'${at.toISOString()}'::timestamptz`;

/** A row of `memories` under `alias` that has not expired at `now` (filters/validity.ts). */
export const unexpiredSql = (now: Date, alias = ''): string =>
  `(${alias}expires_at IS NULL OR ${alias}expires_at > ${instantSql(now)})`;

/**
 * The validity rule as an SQL condition over `memories` under `alias` (with its dot, or '' unaliased). "Current" is
 * judged by the database's clock, as the writers that close a validity do; expiry by the read's instant (the engine's
 * clock). The instants are parameters, so a statement's text is the same at every call and its plan can be kept.
 */
export function validitySql(v: Validity, alias = ''): Sql {
  const column = (name: string) => raw(`${alias}${name}`);
  const unexpired = sql`(${column('expires_at')} IS NULL OR ${column('expires_at')} > ${instant(v.now)})`;
  switch (v.kind) {
    case 'all':
      return unexpired;
    case 'current':
      return sql`(${column('valid_to')} IS NULL OR ${column('valid_to')} > now()) AND ${unexpired}`;
    case 'asOf': {
      const at = instant(v.at);
      return sql`(${raw(validFromSql(alias))} <= ${at} AND (${column('valid_to')} IS NULL OR ${column('valid_to')} > ${at})) AND ${unexpired}`;
    }
  }
}

/** An instant as a parameter: ISO text, read as a timestamptz. */
const instant = (at: Date): Sql => sql`${at.toISOString()}::timestamptz`;
