/**
 * Okapi BM25 over the stored tsvector (Postgres's english lexemes, or the blind index's keyed terms when encryption is
 * on): Postgres finds the rows through the GIN index, this module scores them. ts_rank/ts_rank_cd have no inverse
 * document frequency, which measured clearly worse on LoCoMo (docs/benchmarks.md).
 */

/** k1 (term-frequency saturation) and b (length normalisation), chosen by measurement on short conversational memories. */
export const BM25_K1 = 1.2;
export const BM25_B = 0.3;

const QUOTED = /'((?:[^']|'')*)'(?::([0-9A-D,]+))?/g;

/** The distinct terms of a tsquery's text form (`'a' | 'b' & !'c'`), negated terms included. */
export function tsqueryTerms(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(QUOTED)) out.add((m[1] ?? '').replace(/''/g, "'"));
  out.delete('');
  return [...out];
}

/** A tsquery literal matching exactly this (already normalised) term. */
export function termLiteral(term: string): string {
  return `'${term.replace(/'/g, "''")}'`;
}

export interface Bm25Doc {
  tf: ReadonlyMap<string, number>;
  length: number;
}

/**
 * BM25 of each document for `terms`, given each term's document frequency `df` among `total` documents. The average
 * length is taken over the documents scored (the rows that matched), which ranks the same for these short texts.
 */
export function bm25Scores(docs: readonly Bm25Doc[], terms: readonly string[], df: ReadonlyMap<string, number>, total: number): number[] {
  const avg = docs.length === 0 ? 1 : docs.reduce((s, d) => s + d.length, 0) / docs.length || 1;
  const idf = new Map(terms.map((t) => {
    const n = df.get(t) ?? 0;
    return [t, Math.log(1 + (total - n + 0.5) / (n + 0.5))] as const;
  }));
  return docs.map((d) => {
    let s = 0;
    for (const t of terms) {
      const f = d.tf.get(t);
      if (!f) continue;
      s += (idf.get(t) ?? 0) * ((f * (BM25_K1 + 1)) / (f + BM25_K1 * (1 - BM25_B + (BM25_B * d.length) / avg)));
    }
    return s;
  });
}
