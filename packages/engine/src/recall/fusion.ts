import { namedEntities, speakerOf, WEIGHTS } from './signals.js';
import type { Ranked } from './in-memory.js';
import { temporalScore, type TimeInterval } from './temporal.js';

/** What fusion needs to know of a pooled candidate (all of it from the bank index cache). */
export interface PoolRow {
  id: string;
  batch_id: string | null;
  document_id: string | null;
  seq: number;
  cosine: number;
  /** The start of the text (enough for a "Name:" prefix). */
  head: string | null;
  entities: string[];
  /** Tokens of the text (counted at retain with the same tokenizer as max_tokens). */
  tokens: number;
  occurred_at: number | null;
  superseded_by: string | null;
}

export type Entry = { score: number; scores: Record<string, number> };

/** Scores every pooled candidate by the weighted sum of its signals (signals.ts), best first. */
export function fuse(
  query: string,
  pool: readonly PoolRow[],
  keyword: readonly Ranked[],
  intervals: readonly TimeInterval[],
): Array<[string, Entry]> {
  const bestKeyword = keyword.length > 0 ? Math.max(...keyword.map((k) => k.score)) : 0;
  const kw = new Map(keyword.map((k) => [k.id, k.score] as const));
  const kwNorm = (id: string | undefined) => (id !== undefined && bestKeyword > 0 ? (kw.get(id) ?? 0) / bestKeyword : 0);
  // Neighbours: same retain call, adjacent positions.
  const at = new Map<string, string>();
  for (const p of pool) if (p.batch_id !== null) at.set(`${p.batch_id}#${p.seq}`, p.id);
  // Document groups: document_id, else the retain call.
  const groupOf = (p: PoolRow) => (p.document_id !== null ? `d:${p.document_id}` : p.batch_id !== null ? `b:${p.batch_id}` : `m:${p.id}`);
  const groups = new Map<string, number[]>();
  for (const p of pool) {
    const g = groups.get(groupOf(p));
    if (g) g.push(p.cosine);
    else groups.set(groupOf(p), [p.cosine]);
  }
  const groupScore = new Map<string, number>();
  for (const [g, cosines] of groups) {
    cosines.sort((a, b) => b - a);
    groupScore.set(g, cosines.length < 2 ? (cosines[0] ?? 0) : ((cosines[0] ?? 0) + (cosines[1] ?? 0)) / 2);
  }
  // Speaker/entity: names the candidates carry (a "Name:" prefix or extracted entities) that the query mentions.
  const names = new Set<string>();
  const speakers = new Map<string, string | null>();
  for (const p of pool) {
    const s = p.head === null ? null : speakerOf(p.head);
    speakers.set(p.id, s);
    if (s !== null) names.add(s);
    for (const e of p.entities) names.add(e.toLowerCase());
  }
  const named = namedEntities(query, names);
  const single = named.length === 1 ? named[0]! : undefined;

  const out: Array<[string, Entry]> = [];
  for (const p of pool) {
    const keywordScore = kwNorm(p.id);
    // A neighbour lifts a memory only by how much better it matched the keywords than the memory itself.
    const neighbour =
      p.batch_id === null
        ? 0
        : Math.max(0, Math.max(kwNorm(at.get(`${p.batch_id}#${p.seq - 1}`)), kwNorm(at.get(`${p.batch_id}#${p.seq + 1}`))) - keywordScore);
    const speaker = single !== undefined && (speakers.get(p.id) === single || p.entities.some((e) => e.toLowerCase() === single)) ? 1 : 0;
    const document = groupScore.get(groupOf(p)) ?? 0;
    const time = intervals.length > 0 ? temporalScore(intervals, p.occurred_at) : 0;
    const score =
      WEIGHTS.keyword * keywordScore +
      WEIGHTS.semantic * p.cosine +
      WEIGHTS.neighbour * neighbour +
      WEIGHTS.speaker * speaker +
      WEIGHTS.document * document +
      WEIGHTS.temporal * time;
    const scores: Record<string, number> = {
      semantic: round(p.cosine, 6),
      keyword: round(kw.get(p.id) ?? 0, 6),
      neighbour: round(neighbour, 6),
      speaker,
      document: round(document, 6),
    };
    if (intervals.length > 0) scores['temporal'] = round(time, 6);
    out.push([p.id, { score, scores }]);
  }
  out.sort((a, b) => b[1].score - a[1].score);
  return out;
}


function round(n: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
