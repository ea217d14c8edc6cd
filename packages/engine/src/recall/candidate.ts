import type { KeywordDoc, VectorRowMeta } from '../vectors/storage/indexed-row.js';

/**
 * The signals recall scores a candidate by, in the order their weighted sum is taken (a float sum depends on its
 * order). `feedback` is last: it is learned from the ranking by the others (feedback.ts).
 */
export const SIGNALS = [
  'keyword',
  'semantic',
  'neighbour',
  'neighbourSemantic',
  'neighbour2',
  'speaker',
  'document',
  'documentKeyword',
  'temporal',
  'feedback',
] as const;
export type SignalName = (typeof SIGNALS)[number];
export type Signals = Record<SignalName, number>;

/** Every signal but feedback: the first ranking, the one feedback learns from. */
export const FIRST_PASS_SIGNALS = SIGNALS.filter((s) => s !== 'feedback');

/**
 * The weight of each signal: `score = sum(WEIGHTS[s] * signals[s])`. Chosen by measurement (coordinate ascent on
 * evidence recall@10 + recall@20 over three LoCoMo conversations, checked on two held-out ones; docs/benchmarks.md)
 * and deliberately few: every signal is generic (no rule knows any dataset's names, dates or wording).
 */
export const WEIGHTS: Readonly<Signals> = {
  /** BM25, divided by the best BM25 of the query. */
  keyword: 0.7,
  /** Cosine similarity to the query. */
  semantic: 0.85,
  /**
   * How much better the better of the memory's two neighbours (retained next to it in the same call) matched the
   * keywords than the memory itself (normalised BM25, floored at 0).
   */
  neighbour: 0.45,
  /** How much better the better of the two neighbours matched the query's meaning (cosine excess, floored at 0). */
  neighbourSemantic: 0.3,
  /** As `neighbour`, for the memories two positions away (an answer often comes two turns after its question). */
  neighbour2: 0.2,
  /** 1 when the memory is by (or about) the one person the query names. */
  speaker: 0.5,
  /** Mean cosine of the two best candidates of the memory's document (or retain call); its own when alone. */
  document: 1.2,
  /** Mean normalised BM25 of the two best candidates of the memory's document (or retain call). */
  documentKeyword: 0.3,
  /** Closeness of occurred_at to the time the query names (0 when it names none). */
  temporal: 0.6,
  /** BM25 for the terms pseudo-relevance feedback adds (feedback.ts), divided by the best such score. */
  feedback: 0.3,
};

/** Score factor for facts a later correction superseded: they stay recallable but rank below current facts. */
export const SUPERSEDED_FACTOR = 0.5;
/** Score factor for a near-copy of a better result (near-copy.ts); near-copies wait until every distinct one is in. */
export const NEAR_COPY_FACTOR = 0.5;

/** A memory in recall's pool: its row in the bank index, and what the arms measured of it. */
export interface PoolMember {
  meta: VectorRowMeta;
  cosine: number;
  /** Keyword-index terms (for pseudo-relevance feedback). */
  keywords: KeywordDoc;
}

/** A pooled memory with its signals and the scores the ordering step gives it. */
export interface Candidate extends PoolMember {
  /** Position in the pool: the last tie-break. */
  rank: number;
  signals: Signals;
  /** The query's BM25 for the memory before normalisation (shown as `scores.keyword`). */
  bm25: number;
  /**
   * The share of the query's distinct keyword-index terms the memory holds (0 to 1, shown as `scores.coverage`).
   * Unlike BM25 it needs nothing from the rest of the bank, so it means the same in a bank of one memory or of a
   * million: relevance is calibrated on it (relevance.ts).
   */
  coverage: number;
  /** Whether the query names a time (the temporal signal is shown only then). */
  temporalAsked: boolean;
  /** The weighted sum of the first-pass signals. */
  firstPass: number;
  /** The weighted sum of every signal. */
  fused: number;
  /** What the candidate ranks by: `fused`, times the factors of the flags below. */
  score: number;
  superseded: boolean;
  nearCopy: boolean;
}

/** `sum(WEIGHTS[s] * signals[s])` over `names`, taken in their order. */
export function weightedSum(signals: Readonly<Signals>, names: readonly SignalName[]): number {
  let sum = 0;
  for (const name of names) sum += WEIGHTS[name] * signals[name];
  return sum;
}

/** The per-signal scores as the API shows them (6 decimals); flags appear only when set. */
export function shownScores(c: Candidate): Record<string, number> {
  const s = c.signals;
  const scores: Record<string, number> = {
    semantic: round6(c.cosine),
    keyword: round6(c.bm25),
    coverage: round6(c.coverage),
    neighbour: round6(s.neighbour),
    neighbour_semantic: round6(s.neighbourSemantic),
    neighbour2: round6(s.neighbour2),
    speaker: s.speaker,
    document: round6(s.document),
    document_keyword: round6(s.documentKeyword),
  };
  if (c.temporalAsked) scores['temporal'] = round6(s.temporal);
  scores['feedback'] = round6(s.feedback);
  if (c.superseded) scores['superseded'] = 1;
  if (c.nearCopy) scores['near_copy'] = 1;
  return scores;
}

/** The share of `distinctTerms` (no term twice) that `doc` holds: 0 for a query with no keyword-index terms. */
export function termCoverage(doc: KeywordDoc, distinctTerms: readonly string[]): number {
  if (distinctTerms.length === 0) return 0;
  let held = 0;
  for (const t of distinctTerms) if (doc.get(t) > 0) held++;
  return held / distinctTerms.length;
}

export function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
