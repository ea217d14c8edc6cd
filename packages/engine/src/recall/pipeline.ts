import type { Database } from '../db/database.js';
import type { Embedder } from '../embeddings/embedder.js';
import type { BodyCodec } from '../crypto/codec.js';
import type { Memory } from '../memory/types.js';
import { ORG_BANK_ID } from '../memory/types.js';
import { countTokens } from '../util/tokens.js';
import { demoteSuperseded, recallPredicate } from './filters.js';
import { NEAR_COPY_FACTOR, wordSignature } from './signals.js';
import { NearCopyIndex } from './near-copy.js';
import { resolveTemporal } from './temporal.js';
import { fuse, type Entry, type PoolRow } from './fusion.js';
import type { VectorCache } from '../vectors/vector-cache.js';
import { NO_KEYWORDS, type VectorRowMeta } from '../vectors/bank-vectors.js';
import { IndexArms } from './in-memory.js';
import type { RecallHit, RecallOutcome, RecallRequest, RecallTrace } from './types.js';

/** What recall works with; the engine builds it once. */
export interface RecallDependencies {
  db: Database;
  /** The in-memory bank indexes every arm searches. */
  index: VectorCache;
  /** Turns the query into the keyword index's terms (english lexemes, or blind tokens under encryption). */
  codec: BodyCodec;
  embedder: Embedder;
}

/** Neighbours are fetched for this many of each arm's best candidates (measured: no loss on LoCoMo against all). */
const NEIGHBOUR_SEEDS = 30;

/**
 * Hybrid recall (DESIGN 2.7). Candidates come from three arms: semantic (cosine), keyword (BM25 over the full-text
 * index) and temporal (memories from the time the query names); each candidate's neighbours (retained next to it in
 * the same call) join the pool. Every pooled memory is then scored by a weighted sum of signals (see signals.ts):
 * semantic, keyword, neighbour keyword, speaker/entity named by the query, its document's best cosines, temporal
 * closeness. Near-copies are pushed down, superseded facts demoted, and the list cut to `max_tokens`.
 */
export async function recall(deps: RecallDependencies, r: RecallRequest): Promise<RecallOutcome> {
  const { db, index, codec, embedder } = deps;
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

  // The query embeds on the model's thread while this one brings the bank index up to date and runs the keyword arm;
  // `embed_query` in the trace is the time left to wait for it after that.
  const embedding = embedder.embed([r.query], 'query');
  embedding.catch(() => undefined); // awaited below; this only keeps an early failure elsewhere from leaving it unhandled
  const intervals = resolveTemporal(r.query, r.queryTimestamp);
  // The engine's in-memory bank indexes serve every arm and hold each memory's opened body; the database is asked
  // only for the changes since the last recall (and for query words never seen before).
  const arms = new IndexArms(await index.banks(db, r.tenant, banks), recallPredicate(r));
  const terms = await codec.indexTerms(db, r.tenant, banks, r.query);
  stage('index', terms.length);
  const keyword = arms.keyword(terms, limit);
  stage('keyword', keyword.length);
  const queryVector = (await embedding)[0]!;
  stage('embed_query');
  const semantic = arms.semantic(queryVector, limit);
  stage('semantic', semantic.length);
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
      keywords: arms.keywordDoc(id) ?? NO_KEYWORDS,
    });
  }
  stage('neighbours', pool.length);
  const ordered = fuse(r.query, pool, keyword, intervals, { queryTerms: terms, documentFrequency: (t) => arms.documentFrequency(t), size: arms.size });
  demoteSuperseded(ordered, new Map(pool.map((p) => [p.id, { superseded_by: p.superseded_by }])));
  stage('fuse', ordered.length);
  // Diversity: a near-copy of a better candidate (same words, give or take punctuation and a few) waits until every
  // distinct candidate is in, with its score halved, so copies never crowd the top. Candidates come with their opened
  // bodies from the bank index (synchronised at the start of this call, so no row is read again), and are considered
  // only as far as the token budget reaches.
  const copies: Array<[VectorRowMeta, Entry]> = [];
  const kept = new NearCopyIndex();
  const results: RecallHit[] = [];
  let tokens = 0;
  let considered = 0;
  const take = (meta: VectorRowMeta, entry: Entry): boolean => {
    if (results.length >= limit) return false;
    const cost = meta.tokenCount || countTokens(meta.memory.text);
    if (tokens + cost > r.maxTokens) return false;
    tokens += cost;
    entry.score = round(entry.score, 6);
    results.push(recallHit(meta.memory, entry));
    return true;
  };
  let full = false;
  for (const [id, entry] of ordered) {
    const meta = arms.meta(id);
    if (!meta) continue;
    considered++;
    // The signature is kept with the row: the next recall that meets this memory reuses it.
    if (!kept.admit((meta.nearCopySignature ??= wordSignature(meta.memory.text)))) {
      entry.score *= NEAR_COPY_FACTOR;
      entry.nearCopy = true;
      copies.push([meta, entry]);
      continue;
    }
    if (!take(meta, entry)) {
      full = true;
      break;
    }
  }
  if (!full) for (const [meta, entry] of copies) if (!take(meta, entry)) break;
  // 'hydrate' keeps its name in traces: the candidates taken from the index until the budget was full.
  stage('hydrate', considered);
  stage('select', results.length);
  const outcome: RecallOutcome = { results, tokens };
  if (r.trace) outcome.trace = { stages, total_ms: round(performance.now() - started) };
  return outcome;
}

/**
 * A result: the memory's fields written out, not spread. Up to 100 per recall, and a spread of the memory plus the
 * scores went through several object shapes each time (measured in process: the result stage fell from 0.89 to
 * 0.65 ms per recall).
 */
function recallHit(m: Memory, entry: Entry): RecallHit {
  const hit: RecallHit = {
    id: m.id, bank_id: m.bank_id, space: m.space, type: m.type, text: m.text, context: m.context, metadata: m.metadata,
    tags: m.tags, entities: m.entities, document_id: m.document_id, source_id: m.source_id, occurred_at: m.occurred_at,
    created_at: m.created_at, updated_at: m.updated_at, state: m.state, superseded_by: m.superseded_by,
    valid_to: m.valid_to, score: entry.score, scores: entry.scores(),
  };
  if (m.bank_id === ORG_BANK_ID) hit.org = true;
  return hit;
}

function round(n: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
