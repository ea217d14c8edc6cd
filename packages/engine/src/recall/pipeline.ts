import type { Database } from '../db/database.js';
import { toVectorLiteral } from '../db/database.js';
import type { Embedder } from '../embeddings/embedder.js';
import { codecFor } from '../crypto/codec.js';
import { getMemoriesByIds } from '../memory/store.js';
import type { Memory } from '../memory/types.js';
import { ORG_BANK_ID } from '../memory/types.js';
import { countTokens } from '../util/tokens.js';
import { bm25Scores, parseTsvector, termLiteral, tsqueryTerms } from './bm25.js';
import { demoteSuperseded, recallPredicate, recallWhere } from './filters.js';
import {
  jaccard,
  namedEntities,
  NEAR_COPY_FACTOR,
  NEAR_COPY_JACCARD,
  speakerOf,
  WEIGHTS,
  wordSet,
} from './signals.js';
import { resolveTemporal, temporalScore, temporalWindow } from './temporal.js';
import { vectorCacheFor } from '../vectors/registry.js';
import type { RecallHit, RecallOutcome, RecallRequest, RecallTrace } from './types.js';

/** Query terms matching more than this share of the partition do not select rows (they still score the rows found). */
const COMMON_TERM_SHARE = 0.3;
/** Upper bound on rows the keyword arm scores. */
const KEYWORD_SCAN_LIMIT = 5000;

interface Ranked {
  id: string;
  score: number;
}

interface PoolRow {
  id: string;
  batch_id: string | null;
  document_id: string | null;
  seq: number;
  cosine: number;
}

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
  const [semantic, keyword, temporal] = await Promise.all([
    semanticArm(db, r, banks, queryVector, limit),
    keywordArm(db, r, banks, limit),
    temporalArm(db, r, queryVector, intervals, limit),
  ]);
  stage('arms', new Set([...semantic, ...keyword, ...temporal].map((h) => h.id)).size);
  stages.push({ stage: 'semantic', ms: 0, candidates: semantic.length });
  stages.push({ stage: 'keyword', ms: 0, candidates: keyword.length });
  if (intervals.length > 0) stages.push({ stage: 'temporal', ms: 0, candidates: temporal.length });

  const core = [...new Set([...semantic, ...keyword, ...temporal].map((h) => h.id))];
  const pool = await expandPool(db, r, queryVector, core);
  stage('neighbours', pool.length);
  const memories = await getMemoriesByIds(db, r.tenant, pool.map((p) => p.id));
  stage('hydrate', memories.size);

  const ordered = fuse(r.query, pool, memories, keyword, intervals);
  demoteSuperseded(ordered, memories);
  stage('fuse', ordered.length);

  // Diversity: a near-copy of a better candidate (same words, give or take punctuation and a few) is kept only after
  // every distinct candidate, with its score halved, so copies never crowd the top.
  const distinct: Array<[string, Entry]> = [];
  const copies: Array<[string, Entry]> = [];
  const kept: Array<Set<string>> = [];
  for (const [id, entry] of ordered) {
    const memory = memories.get(id);
    if (!memory) continue;
    const words = wordSet(memory.text);
    if (kept.some((k) => jaccard(k, words) >= NEAR_COPY_JACCARD)) {
      entry.score *= NEAR_COPY_FACTOR;
      entry.scores['near_copy'] = 1;
      copies.push([id, entry]);
    } else {
      kept.push(words);
      distinct.push([id, entry]);
    }
  }
  const results: RecallHit[] = [];
  let tokens = 0;
  for (const [id, entry] of [...distinct, ...copies]) {
    const memory = memories.get(id)!;
    const cost = countTokens(memory.text);
    if (tokens + cost > r.maxTokens) break;
    tokens += cost;
    entry.score = round(entry.score, 6);
    results.push({ ...memory, score: entry.score, scores: entry.scores, ...(memory.bank_id === ORG_BANK_ID ? { org: true as const } : {}) });
  }
  stage('select', results.length);
  const outcome: RecallOutcome = { results, tokens };
  if (r.trace) outcome.trace = { stages, total_ms: round(performance.now() - started) };
  return outcome;
}

function fuse(
  query: string,
  pool: readonly PoolRow[],
  memories: ReadonlyMap<string, Memory>,
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
    groupScore.set(g, ((cosines[0] ?? 0) + (cosines[1] ?? 0)) / 2);
  }
  // Speaker/entity: names the candidates carry (a "Name:" prefix or extracted entities) that the query mentions.
  const names = new Set<string>();
  const speakers = new Map<string, string | null>();
  for (const p of pool) {
    const m = memories.get(p.id);
    if (!m) continue;
    const s = speakerOf(m.text);
    speakers.set(p.id, s);
    if (s !== null) names.add(s);
    for (const e of m.entities) names.add(e.toLowerCase());
  }
  const named = namedEntities(query, names);
  const single = named.length === 1 ? named[0]! : undefined;

  const out: Array<[string, Entry]> = [];
  for (const p of pool) {
    const m = memories.get(p.id);
    if (!m) continue;
    const keywordScore = kwNorm(p.id);
    const neighbour = p.batch_id === null ? 0 : Math.max(kwNorm(at.get(`${p.batch_id}#${p.seq - 1}`)), kwNorm(at.get(`${p.batch_id}#${p.seq + 1}`)));
    const speaker = single !== undefined && (speakers.get(p.id) === single || m.entities.some((e) => e.toLowerCase() === single)) ? 1 : 0;
    const document = groupScore.get(groupOf(p)) ?? 0;
    const time = intervals.length > 0 ? temporalScore(intervals, m.occurred_at ? Date.parse(m.occurred_at) : null) : 0;
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

async function semanticArm(db: Database, r: RecallRequest, banks: string[], vector: Float32Array, limit: number): Promise<Ranked[]> {
  const cache = vectorCacheFor(db);
  if (cache) return cache.search(db, r.tenant, banks, vector, limit, recallPredicate(r));
  const where = recallWhere(r, 1);
  const rows = await db.query<{ id: string; distance: number }>(
    `SELECT id, embedding <=> $1::vector AS distance FROM memories WHERE ${where.sql}
     ORDER BY embedding <=> $1::vector LIMIT ${limit}`,
    [toVectorLiteral(vector), ...where.params],
  );
  return rows.map((row) => ({ id: row.id, score: 1 - Number(row.distance) }));
}

/**
 * BM25 over the full-text index. One query counts each term's document frequency over the rows that match any term
 * (GIN index); a second fetches the rows that match the query's selective terms, whose tsvectors are scored here.
 */
async function keywordArm(db: Database, r: RecallRequest, banks: string[], limit: number): Promise<Ranked[]> {
  // The query side goes through the body codec: Postgres's english tsquery, or the blind index with encryption.
  const tsq = await codecFor(db).keywordQuery(db, r.tenant, banks, r.query, 'any');
  if (tsq === undefined) return [];
  const [parsed] = await db.query<{ q: string }>(`SELECT (${tsq.sql('$1')})::text AS q`, [tsq.value]);
  const terms = tsqueryTerms(parsed?.q ?? '').slice(0, 64);
  if (terms.length === 0) return [];
  const where = recallWhere(r, 1);
  const off = 1 + where.params.length;
  const literals = terms.map(termLiteral);
  const [counts] = await db.query<Record<string, string | number>>(
    `SELECT (SELECT count(*) FROM memories WHERE ${where.sql}) AS total,
       ${terms.map((_, i) => `count(*) FILTER (WHERE fts @@ $${off + 1 + i}::tsquery) AS d${i}`).join(', ')}
     FROM memories WHERE ${where.sql} AND fts @@ $1::tsquery`,
    [literals.join(' | '), ...where.params, ...literals],
  );
  const total = Number(counts?.['total'] ?? 0);
  const df = new Map(terms.map((t, i) => [t, Number(counts?.[`d${i}`] ?? 0)] as const));
  const present = terms.filter((t) => (df.get(t) ?? 0) > 0);
  if (present.length === 0) return [];
  const cap = Math.max(50, COMMON_TERM_SHARE * total);
  let selective = present.filter((t) => (df.get(t) ?? 0) <= cap);
  if (selective.length === 0) selective = [...present].sort((a, b) => (df.get(a) ?? 0) - (df.get(b) ?? 0)).slice(0, 1);
  const rows = await db.query<{ id: string; f: string }>(
    `SELECT id, fts::text AS f FROM memories WHERE ${where.sql} AND fts @@ $1::tsquery LIMIT ${KEYWORD_SCAN_LIMIT}`,
    [selective.map(termLiteral).join(' | '), ...where.params],
  );
  const docs = rows.map((row) => parseTsvector(row.f));
  const scores = bm25Scores(docs.map((d) => ({ tf: d.tf, length: d.length })), present, df, Math.max(total, 1));
  return rows
    .map((row, i) => ({ id: row.id, score: scores[i] ?? 0 }))
    .filter((h) => h.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, limit);
}

/** Memories from the window the query names (when it names one), nearest to the query first. */
async function temporalArm(
  db: Database,
  r: RecallRequest,
  vector: Float32Array,
  intervals: ReturnType<typeof resolveTemporal>,
  limit: number,
): Promise<Ranked[]> {
  const window = temporalWindow(intervals);
  if (!window) return [];
  const where = recallWhere(r, 3);
  const rows = await db.query<{ id: string; distance: number }>(
    `SELECT id, embedding <=> $1::vector AS distance FROM memories
     WHERE ${where.sql} AND occurred_at >= $2 AND occurred_at < $3
     ORDER BY embedding <=> $1::vector LIMIT ${limit}`,
    [toVectorLiteral(vector), window.from.toISOString(), window.to.toISOString(), ...where.params],
  );
  return rows.map((row) => ({ id: row.id, score: 1 - Number(row.distance) }));
}

/** The candidates plus their neighbours (same retain call, positions one before and after), with their cosines. */
async function expandPool(db: Database, r: RecallRequest, vector: Float32Array, ids: string[]): Promise<PoolRow[]> {
  if (ids.length === 0) return [];
  const where = recallWhere(r, 2);
  const rows = await db.query<{ id: string; batch_id: string | null; document_id: string | null; seq: number; distance: number }>(
    `WITH c AS (SELECT id, batch_id, seq FROM memories WHERE id = ANY($2::uuid[])),
          p AS (SELECT id FROM c
                UNION
                SELECT m.id FROM memories m JOIN c ON m.batch_id = c.batch_id AND m.seq IN (c.seq - 1, c.seq + 1))
     SELECT m.id, m.batch_id, m.document_id, m.seq, m.embedding <=> $1::vector AS distance
     FROM memories m JOIN p ON m.id = p.id WHERE ${where.sql}`,
    [toVectorLiteral(vector), ids, ...where.params],
  );
  return rows.map((row) => ({
    id: row.id,
    batch_id: row.batch_id,
    document_id: row.document_id,
    seq: Number(row.seq),
    cosine: 1 - Number(row.distance),
  }));
}

function round(n: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
