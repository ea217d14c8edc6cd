import type { BodyCodec } from '../crypto/codec.js';
import type { Database } from '../db/database.js';
import type { VectorPrecision } from '../vectors/indexed-row.js';
import type { PooledRow, PostgresBankIndex, RowFilter } from '../vectors/postgres-index.js';
import { KEYWORD_SELECT_ROWS, keywordPlan, NEIGHBOUR_SEEDS, type Ranked } from './arms.js';
import type { PoolMember } from './candidate.js';
import { votedTerms } from './feedback.js';
import type { Gathered, StageMark } from './gathered.js';
import { temporalWindow, type TimeInterval } from './temporal.js';
import type { RecallRequest } from './types.js';

/** Where the semantic, temporal and keyword arms search when the pool is read from the database. */
export type ArmSearch = Pick<PostgresBankIndex, 'nearest' | 'keyword'>;

/**
 * Recall's arms on the Postgres and compact tiers: the same arms as the in-memory index's (arms.ts), answered by the
 * database's indexes (HNSW for the semantic and temporal arms, GIN for the keyword arm) or by the banks' compact copies
 * (`arms`, compact-arms.ts), and the retain-call index for neighbours. The keyword arm selects and scores rows with the
 * same plan and BM25 as the in-memory arm; the pool's rows are read once, so signals and ordering run on them exactly
 * as they run on the in-memory index's rows.
 */
export async function gatherFromPostgres(
  search: PostgresBankIndex,
  codec: BodyCodec,
  db: Database,
  r: RecallRequest,
  bankIds: readonly string[],
  limit: number,
  embedding: Promise<Float32Array>,
  intervals: readonly TimeInterval[],
  stage: StageMark,
  /** The compact tier's arms, and the precision its pool's vectors are read at; the database's indexes otherwise. */
  compact?: { arms: ArmSearch; precision: VectorPrecision },
): Promise<Gathered> {
  const arms: ArmSearch = compact?.arms ?? search;
  const precision = compact?.precision ?? 'float';
  const scope = { tenant: r.tenant, bankIds };
  const filter: RowFilter = { space: r.space, types: r.types, tags: r.tags, tagsMatch: r.tagsMatch };
  // The semantic arm starts as soon as the query's vector is there, so its database read overlaps the statistics' and
  // the keyword arm's work (on a server they run on two connections; embedded, the database thread works while this
  // one scores keywords).
  const semanticSearch = embedding.then((query) => arms.nearest(scope, filter, query, limit));
  semanticSearch.catch(() => undefined); // awaited below; this only keeps an early failure from going unhandled
  const terms = await codec.indexTerms(db, r.tenant, bankIds, r.query);
  const { size, frequencies } = await search.statistics(scope, terms);
  stage('index', terms.length);
  const plan = keywordPlan(terms, frequencies, size);
  const keyword = plan
    ? await arms.keyword(
        scope,
        filter,
        plan.selective,
        plan.present.map((term, i) => ({ term, idf: plan.idf[i]! })),
        limit,
        KEYWORD_SELECT_ROWS,
      )
    : [];
  stage('keyword', keyword.length);
  // The keyword hits' rows are read while the query's vector and the semantic arm are still on their way.
  const keywordRows = search.rows(
    scope,
    keyword.map((h) => h.id),
    precision,
  );
  keywordRows.catch(() => undefined); // awaited below, as the semantic search is
  const query = await embedding;
  stage('embed_query');
  const semantic = await semanticSearch;
  stage('semantic', semantic.length);
  const window = temporalWindow(intervals);
  const temporal = window ? await arms.nearest(scope, filter, query, limit, window) : [];
  if (intervals.length > 0) stage('temporal', temporal.length);
  const pool = await poolOf(search, scope, filter, [semantic, keyword, temporal], query, precision, await keywordRows);
  stage('neighbours', pool.length);
  return {
    semantic,
    keyword,
    temporal,
    pool,
    corpus: { queryTerms: terms, documentFrequency: (t) => frequencies.get(t) ?? 0, size },
    prepareFeedback: async (scored) => {
      const wanted = votedTerms(
        scored.map((c) => ({ doc: c.keywords, score: c.firstPass })),
        terms,
      ).filter((t) => !frequencies.has(t));
      for (const [t, n] of await search.documentFrequencies(scope, wanted)) frequencies.set(t, n);
    },
  };
}

/**
 * The arms' hits, then the neighbours (same retain call, one position either side) of each arm's best, each once and
 * in that order, as the in-memory tier pools them (pipeline.ts). A hit whose row was read already (a row of a memory
 * deleted since is left out either way) is not read again.
 */
async function poolOf(
  search: PostgresBankIndex,
  scope: { tenant: string; bankIds: readonly string[] },
  filter: RowFilter,
  arms: ReadonlyArray<readonly Ranked[]>,
  query: Float32Array,
  precision: VectorPrecision,
  /** Rows of some of the hits, read already. */
  read: readonly PooledRow[],
): Promise<PoolMember[]> {
  const hits = [...new Set(arms.flatMap((arm) => arm.map((h) => h.id)))];
  const rows = new Map(read.map((row) => [row.meta.id, row] as const));
  const unread = hits.filter((id) => !rows.has(id));
  for (const row of await search.rows(scope, unread, precision)) rows.set(row.meta.id, row);
  const seeds = [...new Set(arms.flatMap((arm) => arm.slice(0, NEIGHBOUR_SEEDS).map((h) => h.id)))];
  const places: Array<{ batchId: string; seq: number }> = [];
  for (const id of seeds) {
    const meta = rows.get(id)?.meta;
    if (meta?.batchId == null) continue;
    places.push({ batchId: meta.batchId, seq: meta.seq - 1 }, { batchId: meta.batchId, seq: meta.seq + 1 });
  }
  const at = new Map<string, PooledRow>();
  for (const row of await search.at(scope, filter, places, precision)) {
    at.set(`${row.meta.batchId}\u0000${row.meta.seq}`, row);
    rows.set(row.meta.id, row);
  }
  const ids = new Set(hits);
  for (const id of seeds) ids.add(id);
  for (const place of places) {
    const row = at.get(`${place.batchId}\u0000${place.seq}`);
    if (row) ids.add(row.meta.id);
  }
  const pool: PoolMember[] = [];
  for (const id of ids) {
    const row = rows.get(id);
    if (row) pool.push({ meta: row.meta, cosine: unitCosine(row.vector, query), keywords: row.keywords });
  }
  return pool;
}

/** The cosine of two unit vectors. */
export function unitCosine(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}
