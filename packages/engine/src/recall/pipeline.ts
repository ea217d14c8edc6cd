import type { Database } from '../db/database.js';
import { toVectorLiteral } from '../db/database.js';
import type { Embedder } from '../embeddings/embedder.js';
import { codecFor } from '../crypto/codec.js';
import { getMemoriesByIds } from '../memory/store.js';
import type { Memory } from '../memory/types.js';
import { ORG_BANK_ID } from '../memory/types.js';
import { countTokens } from '../util/tokens.js';
import { bm25Scores, termLiteral, tsqueryTerms } from './bm25.js';
import { parseTsvector } from '../vectors/tsvector.js';
import { demoteSuperseded, recallPredicate, recallWhere } from './filters.js';
import {
  namedEntities,
  NEAR_COPY_FACTOR,
  nearCopy,
  speakerOf,
  WEIGHTS,
  wordSet,
} from './signals.js';
import { resolveTemporal, temporalScore, temporalWindow } from './temporal.js';
import { vectorCacheFor } from '../vectors/registry.js';
import { COMMON_TERM_SHARE, IndexArms, type Ranked } from './in-memory.js';
import type { RecallHit, RecallOutcome, RecallRequest, RecallTrace } from './types.js';

/** Upper bound on rows the keyword arm scores. */
const KEYWORD_SCAN_LIMIT = 5000;

interface PoolRow {
  id: string;
  batch_id: string | null;
  document_id: string | null;
  seq: number;
  cosine: number;
  /** The start of the text (enough for a "Name:" prefix); null when bodies are encrypted. */
  head: string | null;
  entities: string[];
  /** Tokens of the text (counted at retain with the same tokenizer as max_tokens). */
  tokens: number;
  occurred_at: number | null;
  superseded_by: string | null;
}

/** Neighbours are fetched for this many of each arm's best candidates (measured: no loss on LoCoMo against all). */
const NEIGHBOUR_SEEDS = 30;

/** Candidates hydrated (read and, with encryption, decrypted) per round while filling the token budget. */
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
  const cache = vectorCacheFor(db);
  let keyword: Ranked[];
  let pool: PoolRow[];
  let cachedMemory: ((id: string) => Memory | undefined) | undefined;
  if (cache) {
    // The engine's in-memory bank indexes serve every arm; the database is asked only for the query's index terms
    // and, at the end, the texts of the pool.
    const arms = new IndexArms(await cache.banks(db, r.tenant, banks), recallPredicate(r));
    cachedMemory = (id) => arms.meta(id)?.memory;
    const terms = await queryIndexTerms(db, r, banks);
    stage('index', terms.length);
    const semantic = arms.semantic(queryVector, limit);
    stage('semantic', semantic.length);
    keyword = arms.keyword(terms, limit);
    stage('keyword', keyword.length);
    const temporal = arms.temporal(queryVector, intervals, limit);
    if (intervals.length > 0) stage('temporal', temporal.length);
    const seeds = [semantic, keyword, temporal].flatMap((arm) => arm.slice(0, NEIGHBOUR_SEEDS).map((h) => h.id));
    const ids = [...new Set([...[...semantic, ...keyword, ...temporal].map((h) => h.id), ...arms.expand([...new Set(seeds)])])];
    pool = [];
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
  } else {
    const [semantic, kw, temporal] = await Promise.all([
      semanticArm(db, r, queryVector, limit),
      keywordArm(db, r, banks, limit),
      temporalArm(db, r, queryVector, intervals, limit),
    ]);
    keyword = kw;
    stage('arms', new Set([...semantic, ...keyword, ...temporal].map((h) => h.id)).size);
    stages.push({ stage: 'semantic', ms: 0, candidates: semantic.length });
    stages.push({ stage: 'keyword', ms: 0, candidates: keyword.length });
    if (intervals.length > 0) stages.push({ stage: 'temporal', ms: 0, candidates: temporal.length });
    pool = await expandPool(db, r, queryVector, [...new Set([...semantic, ...keyword, ...temporal].map((h) => h.id))]);
    stage('neighbours', pool.length);
  }
  if (!cache && codecFor(db).encrypted) {
    // Encrypted bodies: the speaker/entity signal needs the plaintext of the whole pool.
    const opened = await getMemoriesByIds(db, r.tenant, pool.map((p) => p.id));
    for (const p of pool) {
      const m = opened.get(p.id);
      p.head = m ? m.text.slice(0, 96) : null;
      p.entities = m ? m.entities : [];
    }
    stage('open_pool', opened.size);
  }

  // Results come from the cache's opened bodies when there is one (it was synchronised at the start of this call).
  const hydrate = async (ids: string[]): Promise<Map<string, Memory>> => {
    if (!cachedMemory) return getMemoriesByIds(db, r.tenant, ids);
    const out = new Map<string, Memory>();
    for (const id of ids) {
      const m = cachedMemory(id);
      if (m) out.set(id, m);
    }
    return out;
  };
  const ordered = fuse(r.query, pool, keyword, intervals);
  demoteSuperseded(ordered, new Map(pool.map((p) => [p.id, { superseded_by: p.superseded_by }])));
  stage('fuse', ordered.length);

  // Diversity: a near-copy of a better candidate (same words, give or take punctuation and a few) waits until every
  // distinct candidate is in, with its score halved, so copies never crowd the top. Candidates are hydrated a page at a
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
      for (const [id, m] of await hydrate(page)) memories.set(id, m);
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

async function semanticArm(db: Database, r: RecallRequest, vector: Float32Array, limit: number): Promise<Ranked[]> {
  const where = recallWhere(r, 1);
  const rows = await db.query<{ id: string; distance: number }>(
    `SELECT id, embedding <=> $1::vector AS distance FROM memories WHERE ${where.sql}
     ORDER BY embedding <=> $1::vector LIMIT ${limit}`,
    [toVectorLiteral(vector), ...where.params],
  );
  return rows.map((row) => ({ id: row.id, score: 1 - Number(row.distance) }));
}

/** The query's terms as the keyword index stores them (english lexemes, or blind tokens with encryption). */
async function queryIndexTerms(db: Database, r: RecallRequest, banks: string[]): Promise<string[]> {
  // The query side goes through the body codec: Postgres's english tsquery, or the blind index with encryption.
  const tsq = await codecFor(db).keywordQuery(db, r.tenant, banks, r.query, 'any');
  if (tsq === undefined) return [];
  const [parsed] = await db.query<{ q: string }>(`SELECT (${tsq.sql('$1')})::text AS q`, [tsq.value]);
  return tsqueryTerms(parsed?.q ?? '').slice(0, 64);
}


/**
 * BM25 over the full-text index. One query counts each term's document frequency over the rows that match any term
 * (GIN index); a second fetches the rows that match the query's selective terms, whose tsvectors are scored here.
 */
async function keywordArm(db: Database, r: RecallRequest, banks: string[], limit: number): Promise<Ranked[]> {
  const terms = await queryIndexTerms(db, r, banks);
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
  const scores = bm25Scores(docs.map((d) => ({ tf: d.terms, length: d.length })), present, df, Math.max(total, 1));
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
  const rows = await db.query<{
    id: string;
    batch_id: string | null;
    document_id: string | null;
    seq: number;
    distance: number;
    head: string | null;
    entities: string[] | null;
    token_count: number;
    occurred_at: Date | string | null;
    superseded_by: string | null;
  }>(
    `WITH c AS (SELECT id, batch_id, seq FROM memories WHERE id = ANY($2::uuid[])),
          p AS (SELECT id FROM c
                UNION
                SELECT m.id FROM memories m JOIN c ON m.batch_id = c.batch_id AND m.seq IN (c.seq - 1, c.seq + 1))
     SELECT m.id, m.batch_id, m.document_id, m.seq, m.embedding <=> $1::vector AS distance,
            left(m.text, 96) AS head, m.entities, m.token_count, m.occurred_at, m.superseded_by
     FROM memories m JOIN p ON m.id = p.id WHERE ${where.sql}`,
    [toVectorLiteral(vector), ids, ...where.params],
  );
  return rows.map((row) => ({
    id: row.id,
    batch_id: row.batch_id,
    document_id: row.document_id,
    seq: Number(row.seq),
    cosine: 1 - Number(row.distance),
    head: row.head,
    entities: row.entities ?? [],
    tokens: Number(row.token_count),
    occurred_at: row.occurred_at === null ? null : new Date(row.occurred_at).getTime(),
    superseded_by: row.superseded_by,
  }));
}

function round(n: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
