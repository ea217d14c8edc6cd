import type { Database } from '../db/database.js';
import { toVectorLiteral } from '../db/database.js';
import type { Embedder } from '../embeddings/embedder.js';
import { codecFor } from '../crypto/codec.js';
import { getMemoriesByIds } from '../memory/store.js';
import { ORG_BANK_ID } from '../memory/types.js';
import { countTokens } from '../util/tokens.js';
import { demoteSuperseded, recallPredicate, recallWhere } from './filters.js';
import { vectorCacheFor } from '../vectors/registry.js';
import type { RecallHit, RecallOutcome, RecallRequest, RecallTrace } from './types.js';

const RRF_K = 60;

interface Ranked {
  id: string;
  score: number;
}

/** Hybrid recall: semantic and keyword arms fused by reciprocal rank, then cut to the token budget. */
export async function recall(db: Database, embedder: Embedder, r: RecallRequest): Promise<RecallOutcome> {
  const started = performance.now();
  const stages: RecallTrace['stages'] = [];
  let mark = started;
  const stage = (name: string, candidates?: number) => {
    const now = performance.now();
    stages.push({ stage: name, ms: round(now - mark), ...(candidates !== undefined ? { candidates } : {}) });
    mark = now;
  };

  const [vector] = await embedder.embed([r.query], 'query');
  stage('embed_query');
  const [semantic, keyword] = await Promise.all([semanticArm(db, r, vector!), keywordArm(db, r)]);
  stage('semantic', semantic.length);
  stages.push({ stage: 'keyword', ms: 0, candidates: keyword.length });

  const fused = new Map<string, { score: number; scores: Record<string, number> }>();
  const fuse = (arm: string, ranked: Ranked[]) =>
    ranked.forEach((hit, rank) => {
      const entry = fused.get(hit.id) ?? { score: 0, scores: {} };
      entry.score += 1 / (RRF_K + rank + 1);
      entry.scores[arm] = round(hit.score, 6);
      fused.set(hit.id, entry);
    });
  fuse('semantic', semantic);
  fuse('keyword', keyword);
  const ordered = [...fused.entries()].sort((a, b) => b[1].score - a[1].score);
  stage('fuse', ordered.length);

  const memories = await getMemoriesByIds(db, r.tenant, ordered.slice(0, r.candidates).map(([id]) => id));
  demoteSuperseded(ordered, memories);
  const results: RecallHit[] = [];
  let tokens = 0;
  for (const [id, entry] of ordered) {
    const memory = memories.get(id);
    if (!memory) continue;
    const cost = countTokens(memory.text);
    if (tokens + cost > r.maxTokens) break;
    tokens += cost;
    results.push({
      ...memory,
      score: round(entry.score, 6),
      scores: { ...entry.scores, rrf: round(entry.score, 6) },
      ...(memory.bank_id === ORG_BANK_ID ? { org: true as const } : {}),
    });
  }
  stage('hydrate', results.length);
  const outcome: RecallOutcome = { results, tokens };
  if (r.trace) outcome.trace = { stages, total_ms: round(performance.now() - started) };
  return outcome;
}

async function semanticArm(db: Database, r: RecallRequest, vector: Float32Array): Promise<Ranked[]> {
  const cache = vectorCacheFor(db);
  if (cache) {
    const banks = r.includeOrg && r.bankId !== ORG_BANK_ID ? [r.bankId, ORG_BANK_ID] : [r.bankId];
    return cache.search(db, r.tenant, banks, vector, Math.trunc(r.candidates), recallPredicate(r));
  }
  const where = recallWhere(r, 1);
  const rows = await db.query<{ id: string; distance: number }>(
    `SELECT id, embedding <=> $1::vector AS distance FROM memories WHERE ${where.sql}
     ORDER BY embedding <=> $1::vector LIMIT ${Math.trunc(r.candidates)}`,
    [toVectorLiteral(vector), ...where.params],
  );
  return rows.map((row) => ({ id: row.id, score: 1 - Number(row.distance) }));
}

async function keywordArm(db: Database, r: RecallRequest): Promise<Ranked[]> {
  // The query side goes through the body codec: Postgres's english tsquery, or the blind index with encryption.
  const banks = r.includeOrg && r.bankId !== ORG_BANK_ID ? [r.bankId, ORG_BANK_ID] : [r.bankId];
  const tsq = await codecFor(db).keywordQuery(db, r.tenant, banks, r.query, 'any');
  if (tsq === undefined) return [];
  const where = recallWhere(r, 1);
  const rows = await db.query<{ id: string; rank: number }>(
    `WITH q AS (SELECT ${tsq.sql('$1')} AS tsq)
     SELECT id, ts_rank_cd(fts, q.tsq) AS rank FROM memories, q
     WHERE fts @@ q.tsq AND ${where.sql} ORDER BY rank DESC LIMIT ${Math.trunc(r.candidates)}`,
    [tsq.value, ...where.params],
  );
  return rows.map((row) => ({ id: row.id, score: Number(row.rank) }));
}

function round(n: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
