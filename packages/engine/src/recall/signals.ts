import type { Ranked } from './arms.js';
import {
  FIRST_PASS_SIGNALS,
  termCoverage,
  weightedSum,
  type Candidate,
  type PoolMember,
  type Signals,
} from './candidate.js';
import { temporalScore, type TimeInterval } from './temporal.js';
import { maxOf } from '../util/extremes.js';
import type { VectorRowMeta } from '../vectors/storage/indexed-row.js';

/**
 * The per-candidate signals (candidate.ts names and weighs them), measured over the whole pool: a memory's neighbours
 * and document are judged by how the other pooled memories matched.
 */
export function candidates(
  query: string,
  pool: readonly PoolMember[],
  keyword: readonly Ranked[],
  intervals: readonly TimeInterval[],
  /** The query's keyword-index terms (what each candidate's coverage counts). */
  terms: readonly string[],
): Candidate[] {
  const bestKeyword = maxOf(
    keyword.map((k) => k.score),
    0,
  );
  const kw = new Map(keyword.map((k) => [k.id, k.score] as const));
  const kwNorm = (id: string | undefined) =>
    id !== undefined && bestKeyword > 0 ? (kw.get(id) ?? 0) / bestKeyword : 0;
  const cosines = new Map(pool.map((p) => [p.meta.id, p.cosine] as const));
  const cosineOf = (id: string | undefined) => (id === undefined ? 0 : (cosines.get(id) ?? 0));
  const neighbours = neighbourExcess(pool);
  const documents = documentScores(pool, kwNorm);
  const single = singleNamed(query, pool);
  const distinctTerms = [...new Set(terms)];
  return pool.map((p, i) => {
    const m = p.meta;
    const keywordScore = kwNorm(m.id);
    const document = documents[i]!;
    const signals: Signals = {
      keyword: keywordScore,
      semantic: p.cosine,
      neighbour: neighbours(p, 1, kwNorm, keywordScore),
      neighbourSemantic: neighbours(p, 1, cosineOf, p.cosine),
      neighbour2: neighbours(p, 2, kwNorm, keywordScore),
      speaker: single !== undefined && isAbout(m, single) ? 1 : 0,
      document: document.semantic,
      documentKeyword: document.keyword,
      temporal: intervals.length > 0 ? temporalScore(intervals, m.occurredAt) : 0,
      feedback: 0,
    };
    const firstPass = weightedSum(signals, FIRST_PASS_SIGNALS);
    // Written out rather than spread from `p`: one object shape for every candidate, built without a runtime copy.
    return {
      meta: m,
      cosine: p.cosine,
      keywords: p.keywords,
      rank: i,
      signals,
      bm25: kw.get(m.id) ?? 0,
      coverage: termCoverage(p.keywords, distinctTerms),
      temporalAsked: intervals.length > 0,
      firstPass,
      fused: firstPass,
      score: firstPass,
      superseded: false,
      nearCopy: false,
    };
  });
}

/**
 * Neighbours: same retain call, positions `distance` before and after. A neighbour lifts a memory only by how much
 * better it matched than the memory itself (so a term every memory shares lifts nothing).
 */
function neighbourExcess(pool: readonly PoolMember[]) {
  const at = new Map<string, Map<number, string>>();
  for (const { meta } of pool) {
    if (meta.batchId === null) continue;
    const batch = at.get(meta.batchId);
    if (batch) batch.set(meta.seq, meta.id);
    else at.set(meta.batchId, new Map([[meta.seq, meta.id]]));
  }
  return (p: PoolMember, distance: number, of: (id: string | undefined) => number, own: number): number => {
    const batch = p.meta.batchId === null ? undefined : at.get(p.meta.batchId);
    if (batch === undefined) return 0;
    return Math.max(0, Math.max(of(batch.get(p.meta.seq - distance)), of(batch.get(p.meta.seq + distance))) - own);
  };
}

/**
 * Document groups: document_id, else the retain call. A document scores by its two best candidates, for meaning and
 * for keywords. Answers each pool member's document's scores.
 */
function documentScores(
  pool: readonly PoolMember[],
  kwNorm: (id: string) => number,
): Array<{ semantic: number; keyword: number }> {
  // One map per kind of group, keyed by the id itself: no key string is built per candidate. A memory with neither
  // is a group of its own (a pool holds each memory once).
  const byDocument = new Map<string, DocumentGroup>();
  const byBatch = new Map<string, DocumentGroup>();
  const groupOf = (m: VectorRowMeta): DocumentGroup => {
    const key = m.documentId ?? m.batchId;
    if (key === null) return new DocumentGroup();
    const map = m.documentId !== null ? byDocument : byBatch;
    let group = map.get(key);
    if (!group) map.set(key, (group = new DocumentGroup()));
    return group;
  };
  const groups = pool.map(({ meta, cosine }) => {
    const group = groupOf(meta);
    group.add(cosine, kwNorm(meta.id));
    return group;
  });
  return groups.map((g) => g.scores());
}

/** A document group's members as the two best values of each signal (what its scores use) and a count. */
class DocumentGroup {
  private members = 0;
  private readonly semantic = new BestTwo();
  private readonly keyword = new BestTwo();
  private computed: { semantic: number; keyword: number } | undefined;

  add(cosine: number, keyword: number): void {
    this.members++;
    this.semantic.add(cosine);
    this.keyword.add(keyword);
  }

  scores(): { semantic: number; keyword: number } {
    // A lone candidate is its own document, but a lone keyword match does not make a document: halved.
    return (this.computed ??= {
      semantic: this.semantic.sum() / Math.min(this.members, 2),
      keyword: this.keyword.sum() / 2,
    });
  }
}

/** The two largest values added, summed largest first (as summing a sorted copy's first two does). */
class BestTwo {
  private first = -Infinity;
  private second = -Infinity;
  private count = 0;

  add(value: number): void {
    this.count++;
    if (value > this.first) {
      this.second = this.first;
      this.first = value;
    } else if (value > this.second) this.second = value;
  }

  sum(): number {
    let s = 0;
    if (this.count > 0) s += this.first;
    if (this.count > 1) s += this.second;
    return s;
  }
}

/** Whether the memory is by `name` (its speaker prefix) or about it (an extracted entity). */
function isAbout(meta: VectorRowMeta, name: string): boolean {
  return speakerOfRow(meta) === name || meta.memory.entities.some((e) => e.toLowerCase() === name);
}

/** The row's speaker prefix (speakerOf), kept with the row: recalls meet the same memories again and again. */
export function speakerOfRow(meta: VectorRowMeta): string | null {
  if (meta.speaker === undefined) meta.speaker = speakerOf(meta.memory.text);
  return meta.speaker;
}

/**
 * The one person or entity the query names among the names the candidates carry (a "Name:" prefix or extracted
 * entities), lowercased; undefined when it names none or several.
 */
function singleNamed(query: string, pool: readonly PoolMember[]): string | undefined {
  const names = new Set<string>();
  for (const { meta } of pool) {
    const s = speakerOfRow(meta);
    if (s !== null) names.add(s);
    for (const e of meta.memory.entities) names.add(e.toLowerCase());
  }
  const named = namedEntities(query, names);
  return named.length === 1 ? named[0]! : undefined;
}

const SPEAKER = /^([^:\n]{1,40}):\s/u;

/** The speaker prefix of a memory written as "Name: text", lowercased; null when there is none. */
export function speakerOf(text: string): string | null {
  // Most memories have no such prefix: the first colon must sit within the first 41 characters.
  const colon = text.indexOf(':');
  if (colon < 1 || colon > 40) return null;
  const m = SPEAKER.exec(text);
  const name = m?.[1]?.trim();
  return name && /\p{L}/u.test(name) ? name.toLowerCase() : null;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether `name` occurs in `query` as a whole word (case-insensitive, any script). */
export function mentions(query: string, name: string): boolean {
  // Most names are not in the query at all: a plain substring test rules them out before a pattern is compiled.
  if (!query.toLowerCase().includes(name.toLowerCase())) return false;
  return new RegExp(`(^|[^\\p{L}\\p{N}])${escapeRegExp(name.toLowerCase())}([^\\p{L}\\p{N}]|$)`, 'u').test(
    query.toLowerCase(),
  );
}

/**
 * The people/entities the query names among `names` (speaker prefixes and extracted entities of the candidates).
 * The speaker signal applies only when exactly one is named: a question about two people says nothing about whose
 * turn holds the answer.
 */
export function namedEntities(query: string, names: Iterable<string>): string[] {
  const found = new Set<string>();
  for (const n of names) if (n.length >= 2 && mentions(query, n)) found.add(n.toLowerCase());
  return [...found];
}
