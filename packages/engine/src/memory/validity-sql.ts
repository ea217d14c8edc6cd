import type { Validity } from '../filters/validity.js';

/** The effective valid_from of a row of `memories` under `alias`. */
export const validFromSql = (alias: string): string =>
  `COALESCE(${alias}valid_from, ${alias}occurred_at, ${alias}created_at)`;

/**
 * The validity rule as an SQL condition over `memories` under `alias` (with its dot, or '' unaliased); empty when every
 * memory passes. The instant is written as a literal (an ISO text from a Date, so nothing of a caller's text), which
 * leaves the statements' numbered parameters as they are.
 */
export function validitySql(v: Validity, alias = ''): string {
  switch (v.kind) {
    case 'all':
      return '';
    case 'current':
      return `(${alias}valid_to IS NULL OR ${alias}valid_to > now())`;
    case 'asOf': {
      const at = `'${v.at.toISOString()}'::timestamptz`;
      return `(${validFromSql(alias)} <= ${at} AND (${alias}valid_to IS NULL OR ${alias}valid_to > ${at}))`;
    }
  }
}
