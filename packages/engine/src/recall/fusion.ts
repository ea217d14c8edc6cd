import { namedEntities, speakerOf, WEIGHTS } from './signals.js';
import type { Ranked } from './in-memory.js';
import { feedbackScores, type FeedbackCorpus, type FeedbackDoc } from './feedback.js';
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
  /** Keyword-index terms (for pseudo-relevance feedback). */
  keywords: FeedbackDoc;
}

/**
 * A pooled candidate's fused score and the signals behind it. The per-signal record the API shows (`scores`, rounded)
 * is built only for the candidates that become results: fusion scores every pooled candidate (about 300 at the default
 * budget) and at most 100 are answered.
 */
export class Entry {
  feedback = 0;
  superseded = false;
  nearCopy = false;

  constructor(
    public score: number,
    private readonly semantic: number,
    private readonly keyword: number,
    private readonly neighbour: number,
    private readonly neighbourSemantic: number,
    private readonly neighbour2: number,
    private readonly speaker: number,
    private readonly document: number,
    private readonly documentKeyword: number,
    /** Undefined when the query names no time. */
    private readonly temporal: number | undefined,
  ) {}

  /** The per-signal scores as the API shows them (6 decimals); flags appear only when set. */
  scores(): Record<string, number> {
    const scores: Record<string, number> = {
      semantic: round6(this.semantic),
      keyword: round6(this.keyword),
      neighbour: round6(this.neighbour),
      neighbour_semantic: round6(this.neighbourSemantic),
      neighbour2: round6(this.neighbour2),
      speaker: this.speaker,
      document: round6(this.document),
      document_keyword: round6(this.documentKeyword),
    };
    if (this.temporal !== undefined) scores['temporal'] = round6(this.temporal);
    scores['feedback'] = round6(this.feedback);
    if (this.superseded) scores['superseded'] = 1;
    if (this.nearCopy) scores['near_copy'] = 1;
    return scores;
  }
}

/** Sum of the `n` largest values (all of them when there are fewer). */
function sumOfBest(values: number[], n: number): number {
  values.sort((a, b) => b - a);
  let s = 0;
  for (let i = 0; i < Math.min(n, values.length); i++) s += values[i]!;
  return s;
}

/**
 * Scores every pooled candidate by the weighted sum of its signals (signals.ts), best first; then pseudo-relevance
 * feedback (feedback.ts) adds its signal from that first ranking and the list is ranked again.
 */
export function fuse(
  query: string,
  pool: readonly PoolRow[],
  keyword: readonly Ranked[],
  intervals: readonly TimeInterval[],
  corpus: FeedbackCorpus,
): Array<[string, Entry]> {
  const bestKeyword = keyword.length > 0 ? Math.max(...keyword.map((k) => k.score)) : 0;
  const kw = new Map(keyword.map((k) => [k.id, k.score] as const));
  const kwNorm = (id: string | undefined) => (id !== undefined && bestKeyword > 0 ? (kw.get(id) ?? 0) / bestKeyword : 0);
  const cosines = new Map(pool.map((p) => [p.id, p.cosine] as const));
  const cosineOf = (id: string | undefined) => (id === undefined ? 0 : (cosines.get(id) ?? 0));
  // Neighbours: same retain call, positions `distance` before and after. A neighbour lifts a memory only by how much
  // better it matched than the memory itself (so a term every memory shares lifts nothing).
  const at = new Map<string, Map<number, string>>();
  for (const p of pool) {
    if (p.batch_id === null) continue;
    const batch = at.get(p.batch_id);
    if (batch) batch.set(p.seq, p.id);
    else at.set(p.batch_id, new Map([[p.seq, p.id]]));
  }
  const excess = (p: PoolRow, distance: number, of: (id: string | undefined) => number, own: number) => {
    const batch = p.batch_id === null ? undefined : at.get(p.batch_id);
    return batch === undefined ? 0 : Math.max(0, Math.max(of(batch.get(p.seq - distance)), of(batch.get(p.seq + distance))) - own);
  };
  // Document groups: document_id, else the retain call. A document scores by its two best candidates, for meaning
  // and for keywords.
  const groups = pool.map((p) => (p.document_id !== null ? `d:${p.document_id}` : p.batch_id !== null ? `b:${p.batch_id}` : `m:${p.id}`));
  const members = new Map<string, PoolRow[]>();
  pool.forEach((p, i) => {
    const g = members.get(groups[i]!);
    if (g) g.push(p);
    else members.set(groups[i]!, [p]);
  });
  const documentScore = new Map<string, { semantic: number; keyword: number }>();
  for (const [g, rows] of members) {
    documentScore.set(g, {
      // A lone candidate is its own document, but a lone keyword match does not make a document: halved.
      semantic: sumOfBest(rows.map((p) => p.cosine), 2) / Math.min(rows.length, 2),
      keyword: sumOfBest(rows.map((p) => kwNorm(p.id)), 2) / 2,
    });
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
  for (let i = 0; i < pool.length; i++) {
    const p = pool[i]!;
    const keywordScore = kwNorm(p.id);
    const neighbour = excess(p, 1, kwNorm, keywordScore);
    const neighbourSemantic = excess(p, 1, cosineOf, p.cosine);
    const neighbour2 = excess(p, 2, kwNorm, keywordScore);
    const speaker = single !== undefined && (speakers.get(p.id) === single || p.entities.some((e) => e.toLowerCase() === single)) ? 1 : 0;
    const document = documentScore.get(groups[i]!) ?? { semantic: 0, keyword: 0 };
    const time = intervals.length > 0 ? temporalScore(intervals, p.occurred_at) : 0;
    const score =
      WEIGHTS.keyword * keywordScore +
      WEIGHTS.semantic * p.cosine +
      WEIGHTS.neighbour * neighbour +
      WEIGHTS.neighbourSemantic * neighbourSemantic +
      WEIGHTS.neighbour2 * neighbour2 +
      WEIGHTS.speaker * speaker +
      WEIGHTS.document * document.semantic +
      WEIGHTS.documentKeyword * document.keyword +
      WEIGHTS.temporal * time;
    const entry = new Entry(score, p.cosine, kw.get(p.id) ?? 0, neighbour, neighbourSemantic, neighbour2, speaker, document.semantic,
      document.keyword, intervals.length > 0 ? time : undefined);
    out.push([p.id, entry]);
  }
  out.sort((a, b) => b[1].score - a[1].score);

  const rows = new Map(pool.map((p) => [p.id, p] as const));
  const feedback = feedbackScores(out.map(([id, e]) => ({ doc: rows.get(id)!.keywords, score: e.score })), corpus);
  out.forEach(([, e], i) => {
    const f = feedback[i] ?? 0;
    e.score += WEIGHTS.feedback * f;
    e.feedback = f;
  });
  out.sort((a, b) => b[1].score - a[1].score);
  return out;
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
