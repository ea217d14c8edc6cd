import type { Candidate } from './candidate.js';
import { speakerOfRow } from './signals.js';
import type { TimeInterval } from './temporal.js';

/**
 * Newer first among answers to the same question: when the best candidates for a question about the present hold
 * two memories of the same subject that say different things about the same attribute ("Alice: I live in Lisbon",
 * 2023; "Alice: I moved to Berlin", 2024) and no one marked the older as superseded, the newer should come first.
 *
 * Without an LLM there is no telling what a memory is about except its place in embedding space. The candidates of
 * one recall share the query's topic and often a speaker prefix, which lifts every cosine between them alike, so
 * closeness is measured between the candidates' vectors minus the mean of the pool's (centered cosine). Even so a
 * fixed threshold does not separate "the same attribute, another value" from "the same person on a related topic":
 * a person's turns about one hobby are as close as a statement and its update. What does separate them is that a
 * statement and its update are each other's nearest: each is one of the NEAREST closest to the other in the whole
 * pool (mutual nearest neighbours), which turns of a chat about a topic rarely are, since each has several others as
 * close. So each of the first RECENCY_DEPTH candidates, in rank order, moves to just above the highest older one of
 * them of the same subject (speaker prefix or extracted entity) that is at least SAME_ATTRIBUTE_COSINE from it and
 * with which it is a mutual nearest neighbour. The places keep their scores, so scores still fall down the list.
 */

/** How many of the best candidates take part; the rest keep their places. */
const RECENCY_DEPTH = 20;
/** Centered cosine from which two candidates of one subject may say something about the same attribute. */
const SAME_ATTRIBUTE_COSINE = 0.1;
/** Each of a pair must be among the other's this many nearest pooled candidates. */
const NEAREST = 3;

/**
 * Words that make a question about the past or about a history rather than the present ("where did she live", "what
 * has he read", "two years ago"). A question naming a time (temporal.ts) is not about the present either.
 */
const PAST =
  /\b(did|didn't|was|wasn't|were|weren't|had|used to|ago|before|previously|formerly|originally|once|ever|yesterday|last|first)\b|\b(has|have|hasn't|haven't)\s+(\S+\s+){0,2}?(been|\w{2,}ed|done|gone|seen|taken|given|known|written|read|made|met)\b/i;

/** Whether a question asks about the present: it names no time and has no past-tense marker. */
export function asksAboutPresent(query: string, intervals: readonly TimeInterval[]): boolean {
  return intervals.length === 0 && !PAST.test(query);
}

/** Whether a recall reorders its candidates by their vectors (recencyStep): what its reads must bring. */
export function readsVectors(query: string, intervals: readonly TimeInterval[], atInstant: boolean): boolean {
  return atInstant || asksAboutPresent(query, intervals);
}

/**
 * The reordering for one recall, or undefined when it does not apply: the question is not about the present (nor
 * asked `as_of` an instant, whose memories are judged as the present of that instant: the later ones are not
 * answered at all), or the tier cannot give the candidates' vectors (`vectors`).
 */
export async function recencyStep(
  query: string,
  intervals: readonly TimeInterval[],
  atInstant: boolean,
  scored: readonly Candidate[],
  vectors: ((ids: readonly string[]) => Promise<ReadonlyMap<string, Float32Array>>) | undefined,
): Promise<((ranked: Candidate[]) => void) | undefined> {
  if (vectors === undefined || !readsVectors(query, intervals, atInstant)) return undefined;
  const found = await vectors(scored.map((c) => c.meta.id));
  return (ranked) => newerAboveOlder(ranked, found);
}

/** When the memory became true: its valid_from (occurred_at, else when it was stored, unless set). */
function timeOf(c: Candidate): number {
  return c.meta.validFrom;
}

/** Who the memory is by or about: its speaker prefix and extracted entities, lowercased. */
function subjectsOf(c: Candidate): Set<string> {
  const subjects = new Set(c.meta.memory.entities.map((e) => e.toLowerCase()));
  const speaker = speakerOfRow(c.meta);
  if (speaker !== null) subjects.add(speaker);
  return subjects;
}

function sameSubject(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size === 0 || b.size === 0) return a.size === b.size;
  for (const s of a) if (b.has(s)) return true;
  return false;
}

/** The mean of the vectors. */
function meanOf(vectors: Iterable<Float32Array>): Float32Array | undefined {
  let mean: Float32Array | undefined;
  let n = 0;
  for (const v of vectors) {
    mean ??= new Float32Array(v.length);
    for (let j = 0; j < v.length; j++) mean[j]! += v[j]!;
    n++;
  }
  if (mean) for (let j = 0; j < mean.length; j++) mean[j]! /= n;
  return mean;
}

/** `v` minus `mean`, scaled to unit length (a zero vector stays zero), written into `c`. */
function centered(v: Float32Array, mean: Float32Array, c: Float32Array = new Float32Array(v.length)): Float32Array {
  let norm = 0;
  for (let j = 0; j < v.length; j++) {
    c[j] = v[j]! - mean[j]!;
    norm += c[j]! * c[j]!;
  }
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  for (let j = 0; j < v.length; j++) c[j]! *= scale;
  return c;
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let j = 0; j < a.length; j++) s += a[j]! * b[j]!;
  return s;
}

/**
 * `a`'s dot products with each of the `rows` vectors of `d` components laid end to end in `pool`. Four rows at a
 * time, each row's sum in its own variable: the adds of one sum wait for each other, those of four do not. Each sum
 * still adds its products in component order, so every value is the one `dot` gives.
 */
function dotsWithRows(a: Float32Array, pool: Float32Array, rows: number, d: number): number[] {
  const out = new Array<number>(rows);
  let r = 0;
  for (; r + 3 < rows; r += 4) {
    const o0 = r * d;
    const o1 = o0 + d;
    const o2 = o1 + d;
    const o3 = o2 + d;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    for (let j = 0; j < d; j++) {
      const x = a[j]!;
      s0 += x * pool[o0 + j]!;
      s1 += x * pool[o1 + j]!;
      s2 += x * pool[o2 + j]!;
      s3 += x * pool[o3 + j]!;
    }
    out[r] = s0;
    out[r + 1] = s1;
    out[r + 2] = s2;
    out[r + 3] = s3;
  }
  for (; r < rows; r++) {
    let s = 0;
    for (let j = 0, o = r * d; j < d; j++) s += a[j]! * pool[o + j]!;
    out[r] = s;
  }
  return out;
}

/**
 * The centered cosines between the first `n` of `ranked` by place, and `mutual(i, j, cosine)`: whether the i-th and
 * the j-th, at that cosine, are each among the other's NEAREST nearest in the pool (see `nearestBound`). `vectors`:
 * the pooled candidates' embeddings, whose mean is what is taken away.
 *
 * The i-th's cosines to the others of the first `n` are some of its cosines to the pool, the same values, so the bound
 * they give is never above the pool's: a pair below it is not mutual, and a candidate's cosines to the whole pool are
 * computed only when a pair reaches both bounds of the first `n`.
 */
function centeredCosines(ranked: readonly Candidate[], n: number, vectors: ReadonlyMap<string, Float32Array>) {
  const mean = meanOf(vectors.values())!;
  const d = mean.length;
  const head = ranked.slice(0, n).map((c) => {
    const v = vectors.get(c.meta.id);
    return v && centered(v, mean);
  });
  const between = head.map((a) => head.map((b) => (a && b ? dot(a, b) : Number.NaN)));
  const headBounds = between.map(nearestBound);
  let pool: Float32Array | undefined;
  const poolBounds: Array<number | undefined> = [];
  const poolBound = (i: number): number => {
    const known = poolBounds[i];
    if (known !== undefined) return known;
    const a = head[i];
    if (!a) return (poolBounds[i] = Number.NEGATIVE_INFINITY);
    if (!pool) {
      const centeredPool = new Float32Array(vectors.size * d);
      let r = 0;
      for (const v of vectors.values()) centered(v, mean, centeredPool.subarray(r * d, ++r * d));
      pool = centeredPool;
    }
    return (poolBounds[i] = nearestBound(dotsWithRows(a, pool, vectors.size, d)));
  };
  const mutual = (i: number, j: number, cosine: number) =>
    cosine >= headBounds[i]! && cosine >= headBounds[j]! && cosine >= poolBound(i) && cosine >= poolBound(j);
  return { mutual, between };
}

/**
 * The cosine from which `b` is among `a`'s NEAREST nearest pooled candidates, given `a`'s cosines to the pool: its
 * (NEAREST + 1)-th highest, `a` itself (cosine 1) being the first (-Infinity when the pool holds fewer). At or above
 * it, no more than NEAREST pooled candidates, `a` among them, are closer to `a` than `b` is (`b` is never closer than
 * itself), so `b` has at most NEAREST - 1 others before it.
 */
function nearestBound(toPool: readonly number[]): number {
  // The NEAREST + 1 highest so far, highest first.
  const highest: number[] = [];
  for (const c of toPool) {
    if (highest.length === NEAREST + 1 && !(c > highest[NEAREST]!)) continue;
    if (Number.isNaN(c)) continue;
    let at = Math.min(highest.length, NEAREST);
    highest[at] = c;
    for (; at > 0 && highest[at - 1]! < c; at--) {
      highest[at] = highest[at - 1]!;
      highest[at - 1] = c;
    }
  }
  return highest.length === NEAREST + 1 ? highest[NEAREST]! : Number.NEGATIVE_INFINITY;
}

/**
 * Moves, in `ranked` (sorted best first), each of the first RECENCY_DEPTH candidates to just above the highest older
 * candidate it may update (see the head of this file), in rank order, the places keeping their scores.
 */
function newerAboveOlder(ranked: Candidate[], vectors: ReadonlyMap<string, Float32Array>): void {
  if (vectors.size < 3) return; // too few to tell what they share
  const n = Math.min(RECENCY_DEPTH, ranked.length);
  const { mutual, between } = centeredCosines(ranked, n, vectors);
  const subjects = ranked.slice(0, n).map(subjectsOf);
  const times = ranked.slice(0, n).map(timeOf);
  const mayUpdate = (older: number, newer: number) => {
    const cosine = between[older]![newer]!;
    return (
      times[newer]! > times[older]! &&
      cosine >= SAME_ATTRIBUTE_COSINE &&
      sameSubject(subjects[older]!, subjects[newer]!) &&
      mutual(older, newer, cosine)
    );
  };
  /** Original places, in their new order. */
  const order = Array.from({ length: n }, (_, i) => i);
  for (let b = 1; b < n; b++) {
    let target = -1;
    for (let a = 0; a < b; a++) {
      if (!mayUpdate(a, b)) continue;
      const at = order.indexOf(a);
      if (target < 0 || at < target) target = at;
    }
    const from = order.indexOf(b);
    if (target >= 0 && from > target) {
      order.splice(from, 1);
      order.splice(target, 0, b);
    }
  }
  const moved = order.map((i) => ranked[i]!);
  const scores = moved.map((_, slot) => ranked[slot]!.score);
  moved.forEach((c, slot) => {
    c.score = scores[slot]!;
    ranked[slot] = c;
  });
}
