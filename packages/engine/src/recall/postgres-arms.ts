import type { BodyCodec } from '../crypto/codec.js';
import type { Database } from '../db/database.js';
import type { PooledRow, PostgresBankIndex, RowFilter } from '../vectors/storage/postgres-index.js';
import { KEYWORD_SELECT_ROWS, keywordPlan, NEIGHBOUR_SEEDS, type Ranked } from './arms.js';
import type { PoolMember } from './candidate.js';
import { votedTerms } from './feedback.js';
import type { Gathered, StageMark } from './gathered.js';
import { temporalWindow, type TimeInterval } from './temporal.js';
import type { RecallRequest } from './types.js';
import { validityOf } from '../filters/validity.js';

/** Where the semantic, temporal and keyword arms search when the pool is read from the database. */
export type ArmSearch = Pick<PostgresBankIndex, 'nearest' | 'keyword'>;

/**
 * Rows read before the pool is made: arms' hits, the neighbours of some of them, and which hits those neighbours are
 * of (a hit in `seeded` has every neighbour that passes the filter among `neighbours`).
 */
export interface ReadAhead {
  hits: readonly PooledRow[];
  neighbours: readonly PooledRow[];
  seeded: ReadonlySet<string>;
}

/** The compact tier's arms, which read their hits' rows and neighbours themselves: the pool takes those as read. */
export interface CompactSearch extends ArmSearch {
  readonly readAhead: ReadAhead;
}

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
  /** The recall reorders by the candidates' vectors: the pool's rows are read with them. */
  withVectors: boolean,
  /** The compact tier's arms; the database's indexes otherwise. */
  compactArms?: CompactSearch,
): Promise<Gathered> {
  const arms: ArmSearch = compactArms ?? search;
  const scope = { tenant: r.tenant, bankIds };
  const filter = rowFilterOf(r);
  // On the Postgres tier the semantic arm is a database search: it starts as soon as the query's vector is there, so
  // it overlaps the statistics' and the keyword arm's work (on a server they run on two connections; embedded, the
  // database thread works while this one scores keywords). The compact tier's first scans codes on this thread: it
  // starts once the keyword hits' rows are asked for (below), so the database reads those meanwhile.
  const earlySemantic = compactArms ? undefined : embedding.then((query) => arms.nearest(scope, filter, query, limit));
  earlySemantic?.catch(() => undefined); // awaited below; this only keeps an early failure from going unhandled
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
  // The keyword hits' rows and their best's neighbours are read as soon as the query's vector is there.
  const query = await embedding;
  const keywordRows = search.rowsAround(
    scope,
    filter,
    keyword.map((h) => h.id),
    query,
    NEIGHBOUR_SEEDS,
    withVectors,
    keyword.map((h) => h.address),
  );
  keywordRows.catch(() => undefined); // awaited below, as the semantic search is
  stage('embed_query');
  const semantic = await (earlySemantic ?? arms.nearest(scope, filter, query, limit));
  stage('semantic', semantic.length);
  const window = temporalWindow(intervals);
  const temporal = window ? await arms.nearest(scope, filter, query, limit, window) : [];
  if (intervals.length > 0) stage('temporal', temporal.length);
  const byKeyword = await keywordRows;
  const byArms = compactArms?.readAhead;
  const seeded = new Set(byArms?.seeded);
  for (const hit of keyword.slice(0, NEIGHBOUR_SEEDS)) seeded.add(hit.id);
  const { pool, vectors } = await poolOf(
    search,
    scope,
    filter,
    [semantic, keyword, temporal],
    query,
    {
      hits: byKeyword.hits.concat(byArms?.hits ?? []),
      neighbours: byKeyword.neighbours.concat(byArms?.neighbours ?? []),
      seeded,
    },
    withVectors,
  );
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
    // The vectors read with the pool's rows; any other is read by id.
    vectors: async (ids) => {
      const missing = ids.filter((id) => !vectors.has(id));
      const read = missing.length > 0 ? await search.vectors(scope, missing) : new Map<string, Float32Array>();
      const found = new Map<string, Float32Array>();
      for (const id of ids) {
        const vector = vectors.get(id) ?? read.get(id);
        if (vector) found.set(id, vector);
      }
      return found;
    },
  };
}

/**
 * The arms' hits, then the neighbours (same retain call, one position either side) of each arm's best, each once and
 * in that order, as the in-memory tier pools them (pipeline.ts). Rows read already (`ahead`) are not read again (a row
 * of a memory deleted since is left out either way). With `withVectors`, the rows come with their vectors, answered
 * by pooled memory.
 */
async function poolOf(
  search: PostgresBankIndex,
  scope: { tenant: string; bankIds: readonly string[] },
  filter: RowFilter,
  arms: ReadonlyArray<readonly Ranked[]>,
  query: Float32Array,
  ahead: ReadAhead,
  withVectors: boolean,
): Promise<{ pool: PoolMember[]; vectors: Map<string, Float32Array> }> {
  const hits = [...new Set(arms.flatMap((arm) => arm.map((h) => h.id)))];
  const rows = new Map(ahead.hits.map((row) => [row.meta.id, row] as const));
  /** The rows that pass the filter, by their place (retain call and position). */
  const placed = new Map<string, PooledRow>();
  const place = (batchId: string, seq: number) => `${batchId}\u0000${seq}`;
  const addNeighbour = (row: PooledRow) => {
    if (row.meta.batchId !== null) placed.set(place(row.meta.batchId, row.meta.seq), row);
    rows.set(row.meta.id, row);
  };
  for (const row of ahead.neighbours) addNeighbour(row);
  const unread = hits.filter((id) => !rows.has(id));
  for (const row of await search.rows(scope, unread, query, withVectors)) rows.set(row.meta.id, row);
  const seeds = [...new Set(arms.flatMap((arm) => arm.slice(0, NEIGHBOUR_SEEDS).map((h) => h.id)))];
  const places: Array<{ batchId: string; seq: number }> = [];
  for (const id of seeds) {
    const meta = rows.get(id)?.meta;
    if (meta?.batchId == null || ahead.seeded.has(id)) continue;
    places.push({ batchId: meta.batchId, seq: meta.seq - 1 }, { batchId: meta.batchId, seq: meta.seq + 1 });
  }
  for (const row of await search.at(scope, filter, places, query, withVectors)) addNeighbour(row);
  const ids = new Set(hits);
  for (const id of seeds) ids.add(id);
  for (const id of seeds) {
    const meta = rows.get(id)?.meta;
    if (meta?.batchId == null) continue;
    for (const seq of [meta.seq - 1, meta.seq + 1]) {
      const row = placed.get(place(meta.batchId, seq));
      if (row) ids.add(row.meta.id);
    }
  }
  const pool: PoolMember[] = [];
  const vectors = new Map<string, Float32Array>();
  for (const id of ids) {
    const row = rows.get(id);
    if (!row) continue;
    pool.push({ meta: row.meta, cosine: row.cosine, keywords: row.keywords });
    if (row.vector) vectors.set(id, row.vector);
  }
  return { pool, vectors };
}

/** What a recall keeps, as the database filters it. */
export function rowFilterOf(r: RecallRequest): RowFilter {
  return {
    space: r.space,
    types: r.types,
    tags: r.tags,
    tagsMatch: r.tagsMatch,
    validity: validityOf(r),
    expression: r.filter,
  };
}
