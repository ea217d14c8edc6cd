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
 * clock). The instants are written as literals, which leaves the statements' numbered parameters as they are.
 */
export function validitySql(v: Validity, alias = ''): string {
  const unexpired = unexpiredSql(v.now, alias);
  switch (v.kind) {
    case 'all':
      return unexpired;
    case 'current':
      return `(${alias}valid_to IS NULL OR ${alias}valid_to > now()) AND ${unexpired}`;
    case 'asOf': {
      const at = instantSql(v.at);
      return `(${validFromSql(alias)} <= ${at} AND (${alias}valid_to IS NULL OR ${alias}valid_to > ${at})) AND ${unexpired}`;
    }
  }
}
