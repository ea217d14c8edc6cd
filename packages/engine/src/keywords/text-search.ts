import sql, { raw, type Sql } from 'sql-template-tag';

/**
 * Keyword search configuration. The document side builds the tsvector stored with each memory; the query side turns
 * a free-text query into a tsquery. Both use Postgres's English configuration (stemming, stop words).
 */
export const TEXT_SEARCH_CONFIG = 'english';

/** SQL expression for a memory's tsvector, given the SQL of its text. */
export function documentTsvector(text: Sql): Sql {
  return sql`to_tsvector(${raw(`'${TEXT_SEARCH_CONFIG}'`)}, ${text})`;
}

/**
 * Turns a query into an OR of its terms (any matching term counts; ranking rewards more), as a string for
 * to_tsquery. Terms are reduced to letters and digits so no user input can break the tsquery syntax.
 */
export function queryTerms(query: string): string[] {
  const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words)].slice(0, 64);
}
