import type { KeywordDoc } from '../vectors/storage/indexed-row.js';
import { bm25Scores } from '../keywords/bm25.js';
import { maxOf } from '../util/extremes.js';

/**
 * Pseudo-relevance feedback (RM3-like, over keyword-index terms). The best few candidates of the first fusion pass
 * vote for terms the query did not use, each vote weighted by the candidate's score (relative to the best) and the
 * term's share of its text, then by the term's rarity in the bank. The best-voted terms form an expansion query, and
 * every candidate is scored by its BM25 for it. This finds the turns that talk about what the best matches talk about
 * in other words (multi-hop and open-domain questions), without an LLM. Under encryption the terms are the blind
 * index's keyed tokens: the same arithmetic over opaque terms.
 */

/** Candidates that vote, expansion terms kept, and the largest share of the bank a term may appear in. */
export const FEEDBACK = { voters: 5, terms: 10, maxShare: 0.3 } as const;

/** A candidate's keyword-index terms: the bank index's view of a memory (bank-vectors.ts). */
export type FeedbackDoc = KeywordDoc;

/** What feedback needs of the searched banks. */
export interface FeedbackCorpus {
  /** The query's own index terms (never expansion terms). */
  queryTerms: readonly string[];
  documentFrequency(term: string): number;
  /** Memories searched. */
  size: number;
}

/**
 * Scores the candidates (scored by the first pass, in any order) for the expansion terms, each in [0, 1] (divided by
 * the best); all zeros when the first pass gives nothing to learn from.
 */
export function feedbackScores(
  ranked: ReadonlyArray<{ doc: FeedbackDoc; score: number }>,
  corpus: FeedbackCorpus,
): number[] {
  const none = ranked.map(() => 0);
  const voters = best(ranked, FEEDBACK.voters);
  const top = voters[0]?.score ?? 0;
  if (top <= 0) return none;
  const own = new Set(corpus.queryTerms);
  const votes = new Map<string, number>();
  for (const { doc, score } of voters) {
    if (doc.length === 0) continue;
    for (const [term, count] of doc.terms()) {
      if (!own.has(term)) votes.set(term, (votes.get(term) ?? 0) + (score / top) * (count / doc.length));
    }
  }
  // A term in one memory only cannot connect two; one in a large share of the bank says nothing.
  const common = Math.max(5, FEEDBACK.maxShare * corpus.size);
  const df = new Map<string, number>();
  const weighted: Array<[string, number]> = [];
  for (const [term, vote] of votes) {
    const n = corpus.documentFrequency(term);
    if (n <= 1 || n > common) continue;
    df.set(term, n);
    weighted.push([term, vote * Math.log(1 + corpus.size / n)]);
  }
  weighted.sort((a, b) => b[1] - a[1]);
  const chosen = weighted.slice(0, FEEDBACK.terms);
  const strongest = chosen[0]?.[1];
  if (strongest === undefined) return none;
  const weights = new Map(chosen.map(([term, w]) => [term, w / strongest] as const));
  const scores = bm25Scores(
    ranked.map((r) => ({ tf: r.doc, length: r.doc.length })),
    [...weights.keys()],
    df,
    corpus.size,
    weights,
  );
  const max = Math.max(0, maxOf(scores, 0));
  return max > 0 ? scores.map((s) => s / max) : none;
}

/**
 * The terms the voters of `feedbackScores(ranked, ...)` vote for (those the query does not use): the terms whose
 * document frequencies feedback asks for, so a caller that reads them from the database can fetch them first.
 */
export function votedTerms(
  ranked: ReadonlyArray<{ doc: FeedbackDoc; score: number }>,
  queryTerms: readonly string[],
): string[] {
  const own = new Set(queryTerms);
  const terms = new Set<string>();
  for (const { doc } of best(ranked, FEEDBACK.voters)) for (const term of doc.terms().keys()) terms.add(term);
  return [...terms].filter((t) => !own.has(t));
}

/** The `n` best-scoring entries, best first, ties in input order: a stable sort then slice, without the sort. */
function best<T extends { score: number }>(entries: readonly T[], n: number): T[] {
  const out: T[] = [];
  for (const e of entries) {
    if (out.length === n && e.score <= out[n - 1]!.score) continue;
    let at = out.length;
    while (at > 0 && out[at - 1]!.score < e.score) at--;
    out.splice(at, 0, e);
    if (out.length > n) out.pop();
  }
  return out;
}
