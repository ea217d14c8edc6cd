import type { Database } from '../db/database.js';
import type { Embedder } from '../embeddings/embedder.js';
import { codecFor } from '../crypto/codec.js';
import type { Memory } from '../memory/types.js';
import { ORG_BANK_ID } from '../memory/types.js';
import { countTokens } from '../util/tokens.js';
import { tsqueryTerms } from './bm25.js';
import { demoteSuperseded, recallPredicate } from './filters.js';
import {
  namedEntities,
  NEAR_COPY_FACTOR,
  nearCopy,
  speakerOf,
  WEIGHTS,
  wordSet,
} from './signals.js';
import { resolveTemporal, temporalScore } from './temporal.js';
import { vectorCacheFor } from '../vectors/registry.js';
import { IndexArms, type Ranked } from './in-memory.js';
import type { RecallHit, RecallOutcome, RecallRequest, RecallTrace } from './types.js';

interface PoolRow {
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

/** Neighbours are fetched for this many of each arm's best candidates (measured: no loss on LoCoMo against all). */
const NEIGHBOUR_SEEDS = 30;

/** Candidates looked up in the bank index per round while filling the token budget. */
const HYDRATE_PAGE = 40;

type Entry = { score: number; scores: Record<string, number> };

/**
 * Hybrid recall (DESIGN 2.7). Candidates come from three arms: semantic (cosine), keyword (BM25 over the full-text
 * index) and temporal (memories from the time the query names); each candidate's neighbours (retained next to it in
 * the same call) join the pool. Every pooled memory is then scored by a weighted sum of signals (see signals.ts):
 * semantic, keyword, neighbour keyword, speaker/entity named by the query, its document's best cosines, temporal
 * closeness. Near-copies are pushed down, superseded facts demoted, and the list cut to `max_tokens`.
 */
export async function recall(db: Database, embedder: Embedder, r: RecallRequest): Promise<RecallOutcome> {
  const started = performance.now();
  const stages: RecallTrace['stages'] = [];
  let mark = started;
  const stage = (name: string, candidates?: number) => {
    const now = performance.now();
    stages.push({ stage: name, ms: round(now - mark), ...(candidates !== undefined ? { candidates } : {}) });
    mark = now;
  };
  const banks = r.includeOrg && r.bankId !== ORG_BANK_ID ? [r.bankId, ORG_BANK_ID] : [r.bankId];
  const limit = Math.max(1, Math.trunc(r.candidates));

  const [vector] = await embedder.embed([r.query], 'query');
  const queryVector = vector!;
  stage('embed_query');
  const intervals = resolveTemporal(r.query, r.queryTimestamp);
  // The engine's in-memory bank indexes serve every arm and hold each memory's opened body; the database is asked
  // only for the changes since the last recall and for the query's index terms.
  const cache = vectorCacheFor(db);
  if (!cache) throw new Error('recall needs the bank index cache: open the database through Engine.open');
  const arms = new IndexArms(await cache.banks(db, r.tenant, banks), recallPredicate(r));
  const terms = await queryIndexTerms(db, r, banks);
  stage('index', terms.length);
  const semantic = arms.semantic(queryVector, limit);
  stage('semantic', semantic.length);
  const keyword = arms.keyword(terms, limit);
  stage('keyword', keyword.length);
  const temporal = arms.temporal(queryVector, intervals, limit);
  if (intervals.length > 0) stage('temporal', temporal.length);
  const seeds = [semantic, keyword, temporal].flatMap((arm) => arm.slice(0, NEIGHBOUR_SEEDS).map((h) => h.id));
  const ids = [...new Set([...[...semantic, ...keyword, ...temporal].map((h) => h.id), ...arms.expand([...new Set(seeds)])])];
  const pool: PoolRow[] = [];
  for (const id of ids) {
    const m = arms.meta(id);
    if (!m) continue;
    pool.push({
      id,
      batch_id: m.batchId,
      document_id: m.documentId,
      seq: m.seq,
      cosine: arms.cosine(id, queryVector),
      // The cache holds each memory's opened body, so the speaker/entity signal needs no read (nor decryption).
      head: m.memory.text.slice(0, 96),
      entities: m.memory.entities,
      tokens: m.tokenCount,
      occurred_at: m.occurredAt,
      superseded_by: m.memory.superseded_by,
    });
  }
  stage('neighbours', pool.length);
  const ordered = fuse(r.query, pool, keyword, intervals);
  demoteSuperseded(ordered, new Map(pool.map((p) => [p.id, { superseded_by: p.superseded_by }])));
  stage('fuse', ordered.length);
  // Results come from the cache's opened bodies (synchronised at the start of this call): no row is read again.
  const hydrate = (ids: string[]): Map<string, Memory> => {
    const out = new Map<string, Memory>();
    for (const id of ids) {
      const m = arms.meta(id)?.memory;
      if (m) out.set(id, m);
    }
    return out;
  };

  // Diversity: a near-copy of a better candidate (same words, give or take punctuation and a few) waits until every
  // distinct candidate is in, with its score halved, so copies never crowd the top. Candidates are taken a page at a
  // time, only as far as the token budget reaches.
  const memories = new Map<string, Memory>();
  let hydrated = 0;
  const copies: Array<[string, Entry]> = [];
  const kept: Array<Set<string>> = [];
  const results: RecallHit[] = [];
  let tokens = 0;
  let full = false;
  const tokenCount = new Map(pool.map((p) => [p.id, p.tokens] as const));
  const take = (id: string, entry: Entry): boolean => {
    const memory = memories.get(id);
    if (!memory) return true;
    if (results.length >= limit) return false;
    const cost = tokenCount.get(id) || countTokens(memory.text);
    if (tokens + cost > r.maxTokens) return false;
    tokens += cost;
    entry.score = round(entry.score, 6);
    results.push({ ...memory, score: entry.score, scores: entry.scores, ...(memory.bank_id === ORG_BANK_ID ? { org: true as const } : {}) });
    return true;
  };
  // The first page is sized from the retain-time token counts: what fits in max_tokens, plus a margin for near-copies.
  let fits = 0;
  for (let used = 0; fits < ordered.length && fits < limit; fits++) {
    used += tokenCount.get(ordered[fits]![0]) ?? 0;
    if (used > r.maxTokens) break;
  }
  let pageSize = fits + 10;
  for (let i = 0; i < ordered.length && !full; i++) {
    if (i >= hydrated) {
      const page = ordered.slice(hydrated, hydrated + pageSize).map(([id]) => id);
      pageSize = HYDRATE_PAGE;
      hydrated += page.length;
      for (const [id, m] of hydrate(page)) memories.set(id, m);
    }
    const [id, entry] = ordered[i]!;
    const memory = memories.get(id);
    if (!memory) continue;
    const words = wordSet(memory.text);
    if (kept.some((k) => nearCopy(k, words))) {
      entry.score *= NEAR_COPY_FACTOR;
      entry.scores['near_copy'] = 1;
      copies.push([id, entry]);
      continue;
    }
    kept.push(words);
    full = !take(id, entry);
  }
  if (!full) for (const [id, entry] of copies) if (!take(id, entry)) break;
  stage('hydrate', hydrated);
  stage('select', results.length);
  const outcome: RecallOutcome = { results, tokens };
  if (r.trace) outcome.trace = { stages, total_ms: round(performance.now() - started) };
  return outcome;
}

function fuse(
  query: string,
  pool: readonly PoolRow[],
  keyword: readonly Ranked[],
  intervals: ReturnType<typeof resolveTemporal>,
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

/** The query's terms as the keyword index stores them (english lexemes, or blind tokens with encryption). */
async function queryIndexTerms(db: Database, r: RecallRequest, banks: string[]): Promise<string[]> {
  // The query side goes through the body codec: Postgres's english tsquery, or the blind index with encryption.
  const tsq = await codecFor(db).keywordQuery(db, r.tenant, banks, r.query, 'any');
  if (tsq === undefined) return [];
  const [parsed] = await db.query<{ q: string }>(`SELECT (${tsq.sql('$1')})::text AS q`, [tsq.value]);
  return tsqueryTerms(parsed?.q ?? '').slice(0, 64);
}


function round(n: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
