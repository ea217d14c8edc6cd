import type { BankVectors } from '../vectors/kernels/bank-vectors.js';
import type { KeywordDoc, VectorRowMeta } from '../vectors/storage/indexed-row.js';
import { TopK } from '../vectors/kernels/bank-vectors.js';
import { bm25FromCounts, bm25Idf } from '../keywords/bm25.js';
import type { TimeInterval } from './temporal.js';
import { temporalWindow } from './temporal.js';
import { nthSmallest } from '../util/select.js';

/** Neighbours are fetched for this many of each arm's best candidates (measured: no loss on LoCoMo against all). */
export const NEIGHBOUR_SEEDS = 30;

/** Query terms matching more than this share of the partition do not select rows (they still score the rows found). */
export const COMMON_TERM_SHARE = 0.3;

/**
 * The rows the selecting terms may hold together: the rarest terms select while their rows fit (the rarest always
 * does). It bounds the keyword arm's work in a very large bank, where even a term below COMMON_TERM_SHARE can hold a
 * hundred thousand rows, while a bank of up to about this many memories keeps every selecting term. The tiers that
 * score in the engine score every row the plan selects; the Postgres tier's SQL answers no keyword hits when the rarest
 * term alone holds more rows than this (it never scores an arbitrary part of them).
 */
export const KEYWORD_SELECT_ROWS = 20_000;

export interface Ranked {
  id: string;
  score: number;
}

/** Which query terms select the keyword arm's rows, and which score them with what weight (idf). */
export interface KeywordPlan {
  /** The terms some memory holds: they score the rows. */
  present: string[];
  /**
   * The terms that select rows, in query order: those not in more than COMMON_TERM_SHARE of the memories (else the
   * rarest), the rarest of them while their rows fit KEYWORD_SELECT_ROWS.
   */
  selective: string[];
  /** The idf of each present term. */
  idf: number[];
}

/**
 * The keyword arm's plan for `terms` given their document frequencies among `total` memories (both tiers use it, so
 * they select and score the same rows); undefined when no memory holds any term.
 */
export function keywordPlan(
  terms: readonly string[],
  df: ReadonlyMap<string, number>,
  total: number,
): KeywordPlan | undefined {
  const present = terms.filter((t) => (df.get(t) ?? 0) > 0);
  if (present.length === 0) return undefined;
  const cap = Math.max(50, COMMON_TERM_SHARE * total);
  const rarestFirst = [...present].sort((a, b) => (df.get(a) ?? 0) - (df.get(b) ?? 0));
  const selecting = new Set<string>();
  let rows = 0;
  for (const t of rarestFirst) {
    const n = df.get(t) ?? 0;
    if (selecting.size > 0 && (n > cap || rows + n > KEYWORD_SELECT_ROWS)) break;
    selecting.add(t);
    rows += n;
  }
  const selective = present.filter((t) => selecting.has(t));
  const idf = present.map((t) => bm25Idf(df.get(t) ?? 0, Math.max(total, 1)));
  return { present, selective, idf };
}

/** The recall arms over the engine's in-memory bank indexes (vectors, postings, retain positions, dates). */
export class IndexArms {
  constructor(
    private readonly banks: readonly BankVectors[],
    private readonly keep: (m: VectorRowMeta) => boolean,
  ) {}

  meta(id: string): VectorRowMeta | undefined {
    for (const b of this.banks) {
      const m = b.get(id);
      if (m) return m;
    }
    return undefined;
  }

  /** Memories in the banks (filters not applied). */
  get size(): number {
    return this.banks.reduce((s, b) => s + b.size, 0);
  }

  documentFrequency(term: string): number {
    return this.banks.reduce((s, b) => s + b.documentFrequency(term), 0);
  }

  /** A memory's keyword-index terms (for pseudo-relevance feedback). */
  keywordDoc(id: string): KeywordDoc | undefined {
    for (const b of this.banks) {
      const d = b.keywordDoc(id);
      if (d) return d;
    }
    return undefined;
  }

  /**
   * The vectors of the memories of `ids` the banks hold, as views into one buffer: one allocation per recall instead
   * of one per memory, which is what the garbage collector spends its time on.
   */
  vectors(ids: readonly string[], dimension: number): Map<string, Float32Array> {
    const buffer = new Float32Array(ids.length * dimension);
    const found = new Map<string, Float32Array>();
    for (const id of ids) {
      const out = buffer.subarray(found.size * dimension, (found.size + 1) * dimension);
      if (this.banks.some((b) => b.vectorInto(id, out))) found.set(id, out);
    }
    return found;
  }

  cosine(id: string, query: Float32Array): number {
    for (const b of this.banks) if (b.get(id)) return b.cosine(id, query);
    return 0;
  }

  semantic(query: Float32Array, k: number): Ranked[] {
    const top = new TopK();
    for (const b of this.banks) b.search(query, k, this.keep, top);
    return top.results();
  }

  /** BM25 over the index terms (`terms` already normalised like the stored ones). */
  keyword(terms: readonly string[], k: number): Ranked[] {
    const total = this.banks.reduce((s, b) => s + b.size, 0);
    const df = new Map(terms.map((t) => [t, this.banks.reduce((s, b) => s + b.documentFrequency(t), 0)] as const));
    const plan = keywordPlan(terms, df, total);
    if (!plan) return [];
    const { present, selective } = plan;
    const rows: VectorRowMeta[] = [];
    const counts: Uint8Array[] = [];
    for (const b of this.banks) {
      const found = b.matching(selective, present, this.keep);
      // One by one: spreading a common term's matches (a hundred thousand rows) into push overflows the stack.
      for (const row of found.rows) rows.push(row);
      counts.push(found.counts);
    }
    if (rows.length === 0) return [];
    // The same BM25 as bm25Scores (average length over the rows scored), scored in place: this is the hot loop.
    const idf = plan.idf;
    let lengths = 0;
    for (const m of rows) lengths += m.length;
    const avg = lengths / rows.length || 1;
    const scores = new Float64Array(rows.length);
    let i = 0;
    for (const c of counts) {
      for (let r = 0; r < c.length / present.length; r++, i++)
        scores[i] = bm25FromCounts(c, r * present.length, rows[i]!.length, idf, avg);
    }
    return bestFirst(scores, k).map((i) => ({ id: rows[i]!.id, score: scores[i]! }));
  }

  /** The memories inside the window the query names, nearest to the query first. */
  temporal(query: Float32Array, intervals: readonly TimeInterval[], k: number): Ranked[] {
    const window = temporalWindow(intervals);
    if (!window) return [];
    const { from, to } = window;
    const top = new TopK();
    for (const b of this.banks) {
      const inWindow = (m: VectorRowMeta) =>
        m.occurredAt !== null && m.occurredAt >= from && m.occurredAt < to && this.keep(m);
      b.search(query, k, inWindow, top);
    }
    return top.results();
  }

  /** The ids plus their neighbours in the same retain call that pass the filter. */
  expand(ids: readonly string[]): string[] {
    const out = new Set(ids);
    for (const id of ids) {
      for (const b of this.banks) {
        if (!b.get(id)) continue;
        for (const n of b.neighbours(id)) {
          const m = b.get(n);
          if (m && this.keep(m)) out.add(n);
        }
      }
    }
    return [...out];
  }
}

/**
 * The places of the `k` best scores (score > 0), best first, ties in place order: what a stable sort by score then
 * slice gives, without sorting every matching row (a common term can match thousands).
 */
export function bestFirst(scores: Float64Array, k: number): number[] {
  let positive = 0;
  for (const s of scores) if (s > 0) positive++;
  // The k-th best score: rows above it are all in; rows equal to it fill the remaining places in row order.
  const threshold = positive <= k ? 0 : nthSmallest(scores, scores.length - k);
  let above = 0;
  for (const s of scores) if (s > threshold) above++;
  let ties = k - above;
  const picked: number[] = [];
  for (let i = 0; i < scores.length; i++) {
    const s = scores[i]!;
    if (s <= 0) continue;
    if (s > threshold) picked.push(i);
    else if (s === threshold && ties > 0) {
      picked.push(i);
      ties--;
    }
  }
  return picked.sort((a, b) => scores[b]! - scores[a]! || a - b);
}
