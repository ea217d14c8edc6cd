import type { Queryable } from '../db/database.js';
import { tsqueryTerms } from './tsvector.js';
import { queryTerms, TEXT_SEARCH_CONFIG } from './text-search.js';

/** Words remembered at most; past it the cache starts over (a query vocabulary is small and repeats). */
const MAX_WORDS = 50_000;

/**
 * The keyword-index terms of a query on the plaintext path: Postgres's `english` lexemes of its words (stemmed, stop
 * words dropped), exactly what `to_tsquery` makes of them. The query is an OR of single words, and to_tsquery
 * normalises each operand on its own, so a word's lexemes never depend on the rest of the query: they are cached per
 * word, and a recall asks the database only for words it has not seen before (most recalls ask nothing).
 */
export class LexemeCache {
  private readonly byWord = new Map<string, readonly string[]>();

  async terms(q: Queryable, query: string): Promise<string[]> {
    const words = queryTerms(query);
    const missing = words.filter((w) => !this.byWord.has(w));
    if (missing.length > 0) {
      const rows = await q.query<{ word: string; q: string }>(
        `SELECT w AS word, to_tsquery('${TEXT_SEARCH_CONFIG}', w)::text AS q FROM unnest($1::text[]) AS t(w)`,
        [missing],
      );
      if (this.byWord.size + rows.length > MAX_WORDS) this.byWord.clear();
      for (const row of rows) this.byWord.set(row.word, tsqueryTerms(row.q));
    }
    const out = new Set<string>();
    for (const w of words) for (const term of this.byWord.get(w) ?? []) out.add(term);
    return [...out].slice(0, 64);
  }
}
