import type { Database } from '../db/database.js';
import type { Embedder } from '../embeddings/embedder.js';
import type { BodyCodec } from '../crypto/codec.js';
import type { EngineMetrics } from '../metrics.js';
import { ORG_BANK_ID } from '../memory/types.js';
import { NO_KEYWORDS } from '../vectors/storage/indexed-row.js';
import type { VectorCache } from '../vectors/vector-cache.js';
import { IndexArms, NEIGHBOUR_SEEDS } from './arms.js';
import { round6, shownScores, type Candidate, type PoolMember } from './candidate.js';
import { recallPredicate } from './filters.js';
import type { Gathered, StageMark } from './gathered.js';
import { order } from './order.js';
import { readsVectors, recencyStep } from './recency.js';
import { validityOf } from '../filters/validity.js';
import { gatherFromPostgres, rowFilterOf } from './postgres-arms.js';
import { candidates } from './signals.js';
import { resolveTemporal, type TimeInterval } from './temporal.js';
import { chooseTier, type CompactTier, type PostgresTier } from './tier.js';
import { CompactArms } from './compact-arms.js';
import type { RecallHit, RecallOutcome, RecallRequest, RecallTrace, Tier } from './types.js';

/** What recall works with; the engine builds it once. */
export interface RecallDependencies {
  db: Database;
  /** The in-memory bank indexes every arm searches on the in-memory tier. */
  index: VectorCache;
  /** Turns the query into the keyword index's terms (english lexemes, or blind tokens under encryption). */
  codec: BodyCodec;
  embedder: Embedder;
  /** The Postgres tier for large banks (tier.ts); absent: every bank is searched in memory. */
  postgres?: PostgresTier | undefined;
  /** The compact tier for banks too large for the full in-memory copy (tier.ts); absent: none is held compact. */
  compact?: CompactTier | undefined;
  /** Counts recalls by tier, when given. */
  metrics?: Pick<EngineMetrics, 'recallTiers'>;
}

/**
 * Hybrid recall, in stages (README.md): the arms find candidates (semantic, keyword, temporal, and the neighbours of
 * the best of them) on one of two tiers, the in-memory bank index or the database's indexes (tier.ts), signals.ts
 * measures each candidate's signals, order.ts ranks them and cuts the list to the budgets, and the results are written
 * out. Both tiers hand the same pool to the same ranking.
 */
export async function recall(deps: RecallDependencies, r: RecallRequest): Promise<RecallOutcome> {
  const { db, index, embedder } = deps;
  const started = performance.now();
  const stages: RecallTrace['stages'] = [];
  let mark = started;
  const stage: StageMark = (name, candidates) => {
    const now = performance.now();
    stages.push({ stage: name, ms: round(now - mark), ...(candidates !== undefined ? { candidates } : {}) });
    mark = now;
  };
  const banks = r.includeOrg && r.bankId !== ORG_BANK_ID ? [r.bankId, ORG_BANK_ID] : [r.bankId];
  const limit = Math.max(1, Math.trunc(r.candidates));

  // The query embeds on the model's thread while this one brings the bank index up to date and runs the keyword arm;
  // `embed_query` in the trace is the time left to wait for it after that.
  const embedding = embedder.embed([r.query], 'query').then((vectors) => vectors[0]!);
  embedding.catch(() => undefined); // awaited below; this only keeps an early failure elsewhere from leaving it unhandled
  const intervals = resolveTemporal(r.query, r.queryTimestamp);
  const tier = await chooseTier(db, index, deps, r.tenant, banks);
  deps.metrics?.recallTiers.inc({ tier });
  const atInstant = validityOf(r).kind === 'asOf';
  const vectors = readsVectors(r.query, intervals, atInstant);
  const gathered = await gather(deps, tier, r, banks, limit, embedding, intervals, stage, vectors);
  const scored = candidates(r.query, gathered.pool, gathered.keyword, intervals, gathered.corpus.queryTerms);
  await gathered.prepareFeedback?.(scored);
  const arrange = await recencyStep(r.query, intervals, atInstant, scored, gathered.vectors);
  const { taken, relevance, truncatedText, tokens, considered } = order(
    scored,
    gathered.corpus,
    limit,
    r.maxTokens,
    r.minRelevance ?? 0,
    !atInstant,
    arrange,
  );
  stage('fuse', scored.length);
  // 'hydrate' keeps its name in traces: the candidates taken from the index until the budget was full.
  stage('hydrate', considered);
  const results = taken.map((c, i) => recallHit(c, relevance[i]!));
  const first = results[0];
  if (truncatedText !== undefined && first !== undefined) {
    first.memory = { ...first.memory, text: truncatedText };
    first.truncated = true;
  }
  stage('select', results.length);
  const outcome: RecallOutcome = { results, tokens };
  if (r.trace) outcome.trace = { tier, stages, total_ms: round(performance.now() - started) };
  return outcome;
}

/** The arms on the tier chosen. */
async function gather(
  deps: RecallDependencies,
  tier: Tier,
  r: RecallRequest,
  banks: readonly string[],
  limit: number,
  embedding: Promise<Float32Array>,
  intervals: readonly TimeInterval[],
  stage: StageMark,
  /** The recall reorders by the candidates' vectors: the database's reads bring them with the rows. */
  vectors: boolean,
): Promise<Gathered> {
  const { db, codec } = deps;
  // With the Postgres tier off, the database still answers a bank while its copy loads (tier.ts).
  const database = deps.postgres?.search ?? deps.compact?.search;
  if (tier === 'postgres' && database) {
    return gatherFromPostgres(database, codec, db, r, banks, limit, embedding, intervals, stage, vectors);
  }
  if (tier === 'compact' && deps.compact) {
    const search = deps.compact.search;
    // The compact copy does not hold every field a filter reads: the database selects the passing memories at once.
    const passing = r.filter && (await search.passing({ tenant: r.tenant, bankIds: banks }, rowFilterOf(r)));
    if (passing) stage('filter', passing.length);
    const arms = new CompactArms(await deps.index.compactBanks(db, r.tenant, banks), search, passing, vectors);
    return gatherFromPostgres(search, codec, db, r, banks, limit, embedding, intervals, stage, vectors, arms);
  }
  return gatherInMemory(deps, r, banks, limit, embedding, intervals, stage);
}

/**
 * The arms on the in-memory tier. The engine's in-memory bank indexes serve every arm and hold each memory's opened
 * body; the database is asked only for the changes since the last recall (and for query words never seen before).
 */
async function gatherInMemory(
  deps: RecallDependencies,
  r: RecallRequest,
  banks: readonly string[],
  limit: number,
  embedding: Promise<Float32Array>,
  intervals: readonly TimeInterval[],
  stage: StageMark,
): Promise<Gathered> {
  const { db, index, codec } = deps;
  const arms = new IndexArms(await index.banks(db, r.tenant, banks), recallPredicate(r));
  const terms = await codec.indexTerms(db, r.tenant, banks, r.query);
  stage('index', terms.length);
  const keyword = arms.keyword(terms, limit);
  stage('keyword', keyword.length);
  const queryVector = await embedding;
  stage('embed_query');
  const semantic = arms.semantic(queryVector, limit);
  stage('semantic', semantic.length);
  const temporal = arms.temporal(queryVector, intervals, limit);
  if (intervals.length > 0) stage('temporal', temporal.length);
  const seeds = [semantic, keyword, temporal].flatMap((arm) => arm.slice(0, NEIGHBOUR_SEEDS).map((h) => h.id));
  const ids = [
    ...new Set([...[...semantic, ...keyword, ...temporal].map((h) => h.id), ...arms.expand([...new Set(seeds)])]),
  ];
  const pool: PoolMember[] = [];
  for (const id of ids) {
    const meta = arms.meta(id);
    if (meta) pool.push({ meta, cosine: arms.cosine(id, queryVector), keywords: arms.keywordDoc(id) ?? NO_KEYWORDS });
  }
  stage('neighbours', pool.length);
  const corpus = { queryTerms: terms, documentFrequency: (t: string) => arms.documentFrequency(t), size: arms.size };
  const vectors = (ids: readonly string[]) => Promise.resolve(arms.vectors(ids, queryVector.length));
  return { semantic, keyword, temporal, pool, corpus, vectors };
}

/** A result: the memory as the bank index holds it, with what this recall found about it. */
function recallHit(c: Candidate, relevance: number): RecallHit {
  const memory = c.meta.memory;
  return {
    memory,
    score: round6(c.score),
    scores: shownScores(c),
    relevance,
    truncated: false,
    org: memory.bankId === ORG_BANK_ID,
  };
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
