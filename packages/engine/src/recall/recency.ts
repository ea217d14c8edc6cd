import type { Candidate } from './candidate.js';
import { speakerOfRow } from './signals.js';
import type { TimeInterval } from './temporal.js';

/**
 * Newer first among answers to the same question: when the best candidates for a question about the present hold
 * two memories of the same subject that say different things about the same attribute ("Alice: I live in Lisbon",
 * 2023; "Alice: I moved to Berlin", 2024) and no one marked the older as superseded, the newer should come first.
 *
 * Without an LLM there is no telling what a memory is about except its place in embedding space. Two memories about
 * the same attribute of the same subject lie close together once what every candidate shares is taken away: the
 * candidates of one recall share the query's topic and often a speaker prefix, which lifts every cosine between them
 * alike, so closeness is measured between the candidates' vectors minus their mean (centered cosine). Candidates of
 * one subject (speaker prefix or extracted entity) whose centered cosine reaches SAME_ATTRIBUTE_COSINE form groups
 * (transitively), and each group's places in the ranking are refilled newest first, the places keeping their scores.
 * Only the first RECENCY_DEPTH places take part, so the step reorders the head of the list and never changes which
 * memories are in it.
 */

/** How many of the best candidates are regrouped; the rest keep their places. */
const RECENCY_DEPTH = 10;
/** Centered cosine from which two candidates of one subject count as saying something about the same attribute. */
const SAME_ATTRIBUTE_COSINE = 0.2;

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

/**
 * The reordering for one recall, or undefined when it does not apply: the question is not about the present, or the
 * tier cannot give the candidates' vectors (`vectors`).
 */
export async function recencyStep(
  query: string,
  intervals: readonly TimeInterval[],
  scored: readonly Candidate[],
  vectors: ((ids: readonly string[]) => Promise<ReadonlyMap<string, Float32Array>>) | undefined,
): Promise<((ranked: Candidate[]) => void) | undefined> {
  if (vectors === undefined || !asksAboutPresent(query, intervals)) return undefined;
  const found = await vectors(scored.map((c) => c.meta.id));
  return (ranked) => newestFirst(ranked, found);
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

/** `v` minus `mean`, scaled to unit length (a zero vector stays zero). */
function centered(v: Float32Array, mean: Float32Array): Float32Array {
  const c = new Float32Array(v.length);
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
 * Refills, in `ranked` (sorted best first), the places of each group of same-subject, same-attribute candidates among
 * the first RECENCY_DEPTH newest first, the places keeping their scores. `vectors`: the pooled candidates' embeddings
 * (their mean is what is taken away; a candidate without one takes no part).
 */
function newestFirst(ranked: Candidate[], vectors: ReadonlyMap<string, Float32Array>): void {
  const mean = meanOf(vectors.values());
  if (mean === undefined || vectors.size < 3) return; // too few to tell what they share
  const places: number[] = [];
  const units: Float32Array[] = [];
  for (let i = 0; i < Math.min(RECENCY_DEPTH, ranked.length); i++) {
    const v = vectors.get(ranked[i]!.meta.id);
    if (v === undefined) continue;
    places.push(i);
    units.push(centered(v, mean));
  }
  const subjects = places.map((i) => subjectsOf(ranked[i]!));
  const times = places.map((i) => timeOf(ranked[i]!));
  const parent = places.map((_, k) => k);
  const root = (k: number): number => (parent[k] === k ? k : (parent[k] = root(parent[k]!)));
  for (let a = 0; a < places.length; a++)
    for (let b = a + 1; b < places.length; b++) {
      if (times[a] === times[b] || !sameSubject(subjects[a]!, subjects[b]!)) continue;
      if (dot(units[a]!, units[b]!) >= SAME_ATTRIBUTE_COSINE) parent[root(b)] = root(a);
    }
  const groups = new Map<number, number[]>();
  places.forEach((_, k) => {
    const r = root(k);
    const g = groups.get(r);
    if (g) g.push(k);
    else groups.set(r, [k]);
  });
  for (const members of groups.values()) {
    if (members.length < 2) continue;
    const slots = members.map((k) => places[k]!);
    const scores = slots.map((i) => ranked[i]!.score);
    // Newest first; equal times keep their order.
    const newest = [...members].sort((a, b) => times[b]! - times[a]! || a - b).map((k) => ranked[places[k]!]!);
    slots.forEach((slot, n) => {
      const c = newest[n]!;
      c.score = scores[n]!;
      ranked[slot] = c;
    });
  }
}
