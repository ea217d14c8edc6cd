import type { Ranked } from './arms.js';
import { FIRST_PASS_SIGNALS, weightedSum, type Candidate, type PoolMember, type Signals } from './candidate.js';
import { temporalScore, type TimeInterval } from './temporal.js';
import { maxOf } from '../util/extremes.js';

/**
 * The per-candidate signals (candidate.ts names and weighs them), measured over the whole pool: a memory's neighbours
 * and document are judged by how the other pooled memories matched.
 */
export function candidates(
  query: string,
  pool: readonly PoolMember[],
  keyword: readonly Ranked[],
  intervals: readonly TimeInterval[],
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
      speaker: single !== undefined && isAbout(m.memory, single) ? 1 : 0,
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
  const groups = pool.map(({ meta: m }) =>
    m.documentId !== null ? `d:${m.documentId}` : m.batchId !== null ? `b:${m.batchId}` : `m:${m.id}`,
  );
  const members = new Map<string, PoolMember[]>();
  pool.forEach((p, i) => {
    const g = members.get(groups[i]!);
    if (g) g.push(p);
    else members.set(groups[i]!, [p]);
  });
  const scores = new Map<string, { semantic: number; keyword: number }>();
  for (const [g, rows] of members) {
    scores.set(g, {
      // A lone candidate is its own document, but a lone keyword match does not make a document: halved.
      semantic:
        sumOfBest(
          rows.map((p) => p.cosine),
          2,
        ) / Math.min(rows.length, 2),
      keyword:
        sumOfBest(
          rows.map((p) => kwNorm(p.meta.id)),
          2,
        ) / 2,
    });
  }
  return groups.map((g) => scores.get(g)!);
}

/** Whether the memory is by `name` (its speaker prefix) or about it (an extracted entity). */
function isAbout(memory: { text: string; entities: string[] }, name: string): boolean {
  return speakerOf(memory.text) === name || memory.entities.some((e) => e.toLowerCase() === name);
}

/** Sum of the `n` largest values (all of them when there are fewer). */
function sumOfBest(values: number[], n: number): number {
  values.sort((a, b) => b - a);
  let s = 0;
  for (let i = 0; i < Math.min(n, values.length); i++) s += values[i]!;
  return s;
}

/**
 * The one person or entity the query names among the names the candidates carry (a "Name:" prefix or extracted
 * entities), lowercased; undefined when it names none or several.
 */
function singleNamed(query: string, pool: readonly PoolMember[]): string | undefined {
  const names = new Set<string>();
  for (const { meta } of pool) {
    const s = speakerOf(meta.memory.text);
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
