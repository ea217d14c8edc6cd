/**
 * Okapi BM25 over the stored tsvector (Postgres's english lexemes, or the blind index's keyed terms when encryption is
 * on): Postgres finds the rows through the GIN index, this module scores them. ts_rank/ts_rank_cd have no inverse
 * document frequency, which measured clearly worse on LoCoMo (docs/benchmarks.md).
 */

/** k1 (term-frequency saturation) and b (length normalisation), chosen by measurement on short conversational memories. */
export const BM25_K1 = 1.2;
export const BM25_B = 0.3;

export interface Bm25Doc {
  tf: { get(term: string): number | undefined };
  length: number;
}

/**
 * BM25 of each document for `terms`, given each term's document frequency `df` among `total` documents. The average
 * length is taken over the documents scored (the rows that matched), which ranks the same for these short texts.
 */
export function bm25Scores(
  docs: readonly Bm25Doc[],
  terms: readonly string[],
  df: ReadonlyMap<string, number>,
  total: number,
  /** Per-term weights (1 when absent), e.g. for expansion terms. */
  weights?: ReadonlyMap<string, number>,
): number[] {
  const avg = docs.length === 0 ? 1 : docs.reduce((s, d) => s + d.length, 0) / docs.length || 1;
  const idf = terms.map((t) => bm25Idf(df.get(t) ?? 0, total) * (weights?.get(t) ?? 1));
  return docs.map((d) => bm25Score(d.tf, d.length, terms, idf, avg));
}

/** Inverse document frequency of a term held by `n` of `total` documents (never negative). */
export function bm25Idf(n: number, total: number): number {
  return Math.log(1 + (total - n + 0.5) / (n + 0.5));
}

/** BM25's length normalisation of a document of `length` terms, given the average length. */
function lengthNorm(length: number, avg: number): number {
  return BM25_K1 * (1 - BM25_B + (BM25_B * length) / avg);
}

/** One term's BM25 contribution: its count `f` in the document, its idf and the document's length normalisation. */
function termScore(f: number, idf: number, norm: number): number {
  return idf * ((f * (BM25_K1 + 1)) / (f + norm));
}

/** BM25 of one document (term counts `tf`, `length` terms in all) for `terms` with their `idf`s, given the average length. */
export function bm25Score(
  tf: { get(term: string): number | undefined },
  length: number,
  terms: readonly string[],
  idf: readonly number[],
  avg: number,
): number {
  const norm = lengthNorm(length, avg);
  let s = 0;
  for (let i = 0; i < terms.length; i++) {
    const f = tf.get(terms[i]!);
    if (f) s += termScore(f, idf[i]!, norm);
  }
  return s;
}

/**
 * bm25Score with the document's term counts given as `counts[offset + i]` for the i-th term (the in-memory keyword
 * arm reads them from the bank's term index).
 */
export function bm25FromCounts(
  counts: ArrayLike<number>,
  offset: number,
  length: number,
  idf: readonly number[],
  avg: number,
): number {
  const norm = lengthNorm(length, avg);
  let s = 0;
  for (let i = 0; i < idf.length; i++) {
    const f = counts[offset + i]!;
    if (f) s += termScore(f, idf[i]!, norm);
  }
  return s;
}
