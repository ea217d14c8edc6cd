import type { Database, Queryable, SqlParam } from '../../db/database.js';
import { BankIndexes } from '../../db/recall-index.js';
import { binaryVectorSql, vectorFromBase64 } from '../../db/vector-copy.js';
import type { Filter } from '../../filters/ast.js';
import { appendParams, filterSql } from '../../filters/sql.js';
import { parseTsvector } from '../../keywords/tsvector.js';
import type { MemoryReader } from '../../memory/rows.js';
import { vectorLiteral } from '../../memory/vector-literal.js';
import { BM25_B, BM25_K1 } from '../../keywords/bm25.js';
import {
  indexedRowMeta,
  cosineSql,
  pooledColumns,
  pooledColumnsWithCosine,
  pooledRowsFromJson,
  type PooledIndexedRow,
  type KeywordDoc,
  type VectorRowMeta,
} from './indexed-row.js';
import type { Validity } from '../../filters/validity.js';
import { validitySql } from '../../memory/validity-sql.js';

/** The banks searched: one tenant's bank ids (a bank and its tenant's org bank). */
export interface BankScope {
  tenant: string;
  bankIds: readonly string[];
}

/** What a recall keeps, as the database filters it (the same rules as recall's in-memory predicate). */
export interface RowFilter {
  space: string;
  types: readonly string[] | undefined;
  tags: readonly string[] | undefined;
  tagsMatch: 'any' | 'all' | 'any_strict' | 'all_strict' | 'exact';
  /** Which memories pass by their validity interval: the current ones unless the recall asks otherwise. */
  validity: Validity;
  /** The request's filter expression, as SQL over `m` (filters/sql.ts). */
  expression?: Filter | undefined;
}

export interface ScoredId {
  id: string;
  score: number;
  /** Where the memory was last read (its ctid), when the arm that found it knows (a compact copy does). */
  address?: string;
}

/** A memory read for recall's pool: its index row, its vector's cosine with the query and its keyword-index terms. */
export interface PooledRow {
  meta: VectorRowMeta;
  cosine: number;
  keywords: KeywordDoc;
  /** The stored vector, when the read was asked for it. */
  vector?: Float32Array;
}

/** The rows of an arm's hits, and of the hits' neighbours (see PostgresBankIndex.rowsAround). */
export interface RowsAround {
  hits: PooledRow[];
  neighbours: PooledRow[];
}

/** A BM25 term: its keyword-index form and its inverse document frequency. */
export interface WeightedTerm {
  term: string;
  idf: number;
}

/** A half-open time window in epoch milliseconds. */
export interface TimeWindow {
  from: number;
  to: number;
}

/** The largest `hnsw.ef_search` pgvector accepts. */
const MAX_EF_SEARCH = 1000;
/** The smallest, pgvector's default. */
const MIN_EF_SEARCH = 40;

/** What a hit read by `around` carries from its first read of the row (`m`): its id, row address and retain place. */
const HIT_COLUMNS =
  'm.id AS hit_id, m.ctid AS hit_tid, m.tableoid AS hit_table, m.batch_id AS hit_batch, m.seq AS hit_seq';

/**
 * `columns` (over `memories m`, with `a.n` the asked place) of the memories asked in $6 (ids) that pass `where`, each
 * read at its address in $8 (ctids by the same places, null when unknown) when it is still there: no id index lookup.
 * The row at an address counts only if it has the id asked there (each partition of the table has its own addresses);
 * the memories not found so (a rewrite of the table moved them, or no address was known) are read by id. Each
 * address is read alone (OFFSET 0 keeps the conditions outside), so the read is by address whatever the planner would
 * guess of a small bank.
 */
function askedRowsSql(columns: string, where: string): string {
  return `WITH asked AS MATERIALIZED (SELECT * FROM unnest($6::uuid[], $8::tid[]) WITH ORDINALITY a(id, address, n)),
     placed AS MATERIALIZED (
       SELECT ${columns} FROM asked a
       CROSS JOIN LATERAL (SELECT m.ctid AS ctid, m.tableoid AS tableoid, m.* FROM memories m WHERE m.ctid = a.address OFFSET 0) m
       WHERE m.id = a.id AND ${where}),
     moved AS MATERIALIZED (SELECT * FROM asked a WHERE a.id NOT IN (SELECT hit_id FROM placed))
     SELECT * FROM placed
     UNION ALL
     SELECT ${columns} FROM moved a JOIN memories m ON m.id = a.id WHERE ${where}`;
}

/**
 * The tsquery text form of one term, quoted so the term is taken as it is stored (an english lexeme or a blind index
 * token), never parsed or normalised again.
 */
export function tsqueryTerm(term: string): string {
  return `'${term.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/** The tsquery matching any of `terms`. */
function anyOf(terms: readonly string[]): string {
  return terms.map(tsqueryTerm).join(' | ');
}

/** The parameters every scoped statement starts with ($1-$5); a statement's own ones follow from $6. */
const SCOPE_PARAMS = 5;

/**
 * One bank's rows are in one partition (migration 019), read from the bank's row in the statement's own snapshot:
 * the statement then reads that partition alone (Postgres prunes the others when it runs), never the shared one a
 * moved bank left, whose dead rows and index entries a read of the bank would otherwise walk until vacuumed.
 */
export const BANK_PART = 'm.part = COALESCE((SELECT b.part FROM banks b WHERE b.tenant = $1 AND b.bank_id = $2), 0)';

/**
 * The scope and filter as SQL over `memories m`, with their parameters ($1-$5). Rows without a vector are left out, as
 * the in-memory index leaves them out. The filter expression's values go after the statement's `own` parameters (so
 * the statements keep their fixed numbers): pass them as `[...params, ...own, ...after]`.
 */
function scopeSql(
  scope: BankScope,
  filter?: RowFilter,
  own = 0,
): { where: string; params: SqlParam[]; after: SqlParam[] } {
  // One bank is named by an equality, which a bank's partial index (migration 007) matches.
  const single = scope.bankIds.length === 1;
  const params: SqlParam[] = [scope.tenant, single ? scope.bankIds[0]! : [...scope.bankIds]];
  let where = `m.tenant = $1 AND ${single ? `m.bank_id = $2 AND ${BANK_PART}` : 'm.bank_id = ANY($2::text[])'}`;
  where += ' AND m.embedding IS NOT NULL';
  if (filter === undefined) return { where, params, after: [] };
  params.push(filter.space, filter.types?.length ? [...filter.types] : null, filter.tags ? [...filter.tags] : null);
  where += ` AND m.space = $3 AND m.state = 'valid' AND ($4::text[] IS NULL OR m.type = ANY($4::text[]))`;
  // $5 is always named (an unnamed parameter has no type): null when the request has no tags.
  where += ` AND ($5::text[] IS NULL OR ${tagsSql(filter.tagsMatch)})`;
  // The validity's instants and the filter expression's values follow the caller's own parameters.
  const numbered: SqlParam[] = new Array<SqlParam>(SCOPE_PARAMS + own).fill(null);
  where += ` AND ${appendParams(validitySql(filter.validity, 'm.'), numbered)}`;
  if (filter.expression !== undefined) where += ` AND ${appendParams(filterSql(filter.expression, 'm'), numbered)}`;
  return { where, params, after: numbered.slice(SCOPE_PARAMS + own) };
}

/** Hindsight's tags_match over `m.tags` and the requested tags ($5): `any`/`all` also match untagged memories. */
function tagsSql(mode: RowFilter['tagsMatch']): string {
  const lenient = 'cardinality($5::text[]) = 0 OR cardinality(m.tags) = 0';
  switch (mode) {
    case 'any':
      return `(${lenient} OR m.tags && $5::text[])`;
    case 'all':
      return `(${lenient} OR m.tags @> $5::text[])`;
    case 'any_strict':
      return 'm.tags && $5::text[]';
    case 'all_strict':
      return 'm.tags @> $5::text[]';
    case 'exact':
      return '(m.tags @> $5::text[] AND m.tags <@ $5::text[])';
  }
}

/** A row's keyword-index terms, parsed from its tsvector. */
class ParsedKeywords implements KeywordDoc {
  constructor(
    private readonly counts: ReadonlyMap<string, number>,
    readonly length: number,
  ) {}

  get(term: string): number {
    return this.counts.get(term) ?? 0;
  }

  terms(): ReadonlyMap<string, number> {
    return this.counts;
  }
}

/**
 * A bank's search in the database itself, for banks too large to copy into memory: the bank's pgvector HNSW index
 * (migration 007) for the nearest vectors and the GIN index on `fts` for keyword matches. Each query answers ids and the raw arm
 * score; recall reads the pool's rows with `rows` and ranks them as it ranks the in-memory index's.
 */
export class PostgresBankIndex {
  constructor(
    private readonly db: Database,
    /** Opens the rows read (decrypting bodies under encryption at rest); rows that fail to open are left out. */
    private readonly reader: MemoryReader,
    /** The HNSW indexes of the banks large enough for this tier (recall/tier.ts requests them). */
    readonly indexes: BankIndexes = new BankIndexes(db),
  ) {}

  /**
   * Memories in the banks (filters not applied): the corpus size BM25 counts, kept by the writes themselves
   * (migrations 008 and 013: totals plus the deltas not folded yet), so reading it costs the same at any size.
   */
  async count(scope: BankScope): Promise<number> {
    return (await this.statistics(scope, [])).size;
  }

  /**
   * The banks' size (`count`) and each term's document frequency (`documentFrequencies`), in one call (migration 017):
   * the totals plus the deltas the writes appended since they were last folded (vectors/storage/statistics-folder.ts).
   */
  async statistics(
    scope: BankScope,
    terms: readonly string[],
  ): Promise<{ size: number; frequencies: Map<string, number> }> {
    const frequencies = new Map<string, number>(terms.map((t) => [t, 0]));
    const rows = await this.db.query<{ term: string | null; n: number }>(
      'SELECT term, n FROM mnemos_bank_statistics($1, $2::text[], $3::text[])',
      [scope.tenant, [...scope.bankIds], [...terms]],
    );
    let size = 0;
    for (const r of rows) {
      if (r.term === null) size = r.n;
      else frequencies.set(r.term, r.n);
    }
    return { size, frequencies };
  }

  /** How many memories of the banks hold each term (filters not applied), kept by the writes (`statistics`). */
  async documentFrequencies(scope: BankScope, terms: readonly string[]): Promise<Map<string, number>> {
    if (terms.length === 0) return new Map();
    return (await this.statistics(scope, terms)).frequencies;
  }

  /**
   * The stored vectors of `ids` (those still in the banks), read in binary: recall asks for every pooled memory's, and
   * their text form costs the database a formatting of every float.
   */
  async vectors(scope: BankScope, ids: readonly string[]): Promise<Map<string, Float32Array>> {
    const found = new Map<string, Float32Array>();
    if (ids.length === 0) return found;
    const rows = await this.db.query<{ id: string; v: string }>(
      `SELECT id, ${binaryVectorSql('embedding')} AS v FROM memories
       WHERE tenant = $1 AND bank_id = ANY($2::text[]) AND id = ANY($3::uuid[]) AND embedding IS NOT NULL`,
      [scope.tenant, [...scope.bankIds], [...ids]],
    );
    for (const r of rows) found.set(r.id, vectorFromBase64(r.v));
    return found;
  }

  /**
   * The `k` best BM25 scores among the rows holding any of `select` that pass the filter, scored for every term of
   * `score` (distinct terms; recall's k1 and b; the average length is taken over the rows matched, as the in-memory
   * arm takes it). Nothing when more than `maxRows` rows match: scoring them would cost the database work that grows
   * with the bank, and scoring only some of them would answer an arbitrary part of the matches.
   */
  async keyword(
    scope: BankScope,
    filter: RowFilter,
    select: readonly string[],
    score: readonly WeightedTerm[],
    k: number,
    maxRows: number,
  ): Promise<ScoredId[]> {
    if (select.length === 0 || score.length === 0) return [];
    const { where, params, after } = scopeSql(scope, filter, 5);
    // The plan keeps the selected rows within the budget unless one term alone holds more: then the arm answers
    // nothing here (the tiers that score in the engine score them all). One row past the budget tells.
    const rowLimit = Math.max(1, Math.trunc(maxRows));
    const rows = await this.db.query<{ id: string; score: number | null }>(
      // One pass over each hit's terms gives its length and its counts of the scoring terms.
      `WITH hits AS MATERIALIZED (SELECT m.id, m.fts FROM memories m WHERE ${where} AND m.fts @@ $6::tsquery
                                  LIMIT ${rowLimit + 1}),
       fits AS (SELECT count(*) <= ${rowLimit} AS ok FROM hits),
       per AS (SELECT h.id, sum(coalesce(array_length(u.positions, 1), 1))::float8 AS len,
                      array_agg(q.idf) FILTER (WHERE q.idf IS NOT NULL) AS idfs,
                      array_agg(coalesce(array_length(u.positions, 1), 1)::float8) FILTER (WHERE q.idf IS NOT NULL) AS fs
               FROM hits h JOIN fits ON fits.ok CROSS JOIN LATERAL unnest(h.fts) u
               LEFT JOIN unnest($7::text[], $8::float8[]) AS q(term, idf) ON q.term = u.lexeme
               GROUP BY h.id),
       average AS (SELECT coalesce(nullif(avg(len), 0), 1) AS len FROM per)
       SELECT p.id, (SELECT sum(x.idf * (x.f * ($9::float8 + 1))
                                / (x.f + $9::float8 * (1 - $10::float8 + $10::float8 * p.len / a.len)))
                     FROM unnest(p.idfs, p.fs) AS x(idf, f))::float8 AS score
       FROM per p CROSS JOIN average a
       ORDER BY score DESC NULLS LAST, p.id LIMIT ${Math.max(1, Math.trunc(k))}`,
      [...params, anyOf(select), score.map((t) => t.term), score.map((t) => t.idf), BM25_K1, BM25_B, ...after],
    );
    return rows.flatMap((r) => (r.score !== null && r.score > 0 ? [{ id: r.id, score: r.score }] : []));
  }

  /**
   * The `k` rows nearest to `query` (cosine) that pass the filter, and lie in `window` when one is given, through each
   * bank's HNSW index (exactly while it has none): one query per bank, since a partial index answers only a query
   * naming its one bank. `ef_search` grows with `k`, and pgvector's iterative scan (0.8 and later; an unknown setting
   * is a harmless placeholder before) keeps scanning until enough rows pass the filter. Scores are cosines.
   */
  async nearest(
    scope: BankScope,
    filter: RowFilter,
    query: Float32Array,
    k: number,
    window?: TimeWindow,
  ): Promise<ScoredId[]> {
    const limit = Math.max(1, Math.trunc(k));
    const efSearch = Math.min(MAX_EF_SEARCH, Math.max(MIN_EF_SEARCH, 2 * limit));
    const inWindow = window
      ? ` AND m.occurred_at >= to_timestamp($7::float8 / 1000) AND m.occurred_at < to_timestamp($8::float8 / 1000)`
      : '';
    const found = await this.db.transaction(async (tx) => {
      await tx.query(
        `SELECT set_config('hnsw.ef_search', $1, true), set_config('hnsw.iterative_scan', 'relaxed_order', true)`,
        [String(efSearch)],
      );
      const rows: ScoredId[] = [];
      for (const bankId of scope.bankIds) {
        const own = [vectorLiteral(query), ...(window ? [window.from, window.to] : [])];
        const { where, params, after } = scopeSql({ tenant: scope.tenant, bankIds: [bankId] }, filter, own.length);
        const all = [...params, ...own, ...after];
        const hits = await tx.query<ScoredId>(
          `SELECT m.id, 1 - (m.embedding <=> $6::vector) AS score FROM memories m WHERE ${where}${inWindow}
           ORDER BY m.embedding <=> $6::vector LIMIT ${limit}`,
          all,
        );
        for (const hit of hits) rows.push(hit);
      }
      return rows;
    });
    // A relaxed-order scan may answer a few rows out of order, and each bank answered its own best.
    return found.sort((a, b) => b.score - a.score).slice(0, limit);
  }

  /** The ids of the banks' memories that pass the filter (with its expression): one statement, no body opened. */
  async passing(scope: BankScope, filter: RowFilter): Promise<string[]> {
    const { where, params, after } = scopeSql(scope, filter);
    const rows = await this.db.query<{ id: string }>(`SELECT m.id FROM memories m WHERE ${where}`, [
      ...params,
      ...after,
    ]);
    return rows.map((r) => r.id);
  }

  /**
   * The memories of the banks with these ids (any space or state), opened, with their vectors' cosines with `query`
   * and their terms; with `vectors`, the stored vectors too (this and the other pooled reads), read with the rows
   * instead of a second time by id.
   */
  async rows(scope: BankScope, ids: readonly string[], query: Float32Array, vectors = false): Promise<PooledRow[]> {
    if (ids.length === 0) return [];
    const { where, params } = scopeSql(scope);
    return this.pooled(
      this.db,
      scope.tenant,
      `SELECT ${pooledColumns('$4', vectors)} FROM memories m WHERE ${where} AND m.id = ANY($3::uuid[])`,
      [...params, [...ids], vectorLiteral(query)],
      vectors,
    );
  }

  /**
   * The rows of these memories (any space or state), and the rows that pass the filter next to (same retain call, one
   * position either side) the first `seeds` of them, in one statement: the hits' neighbours join recall's pool.
   */
  async rowsAround(
    scope: BankScope,
    filter: RowFilter,
    ids: readonly string[],
    query: Float32Array,
    seeds: number,
    vectors = false,
    /** Where each memory was last read, by the ids' places, when known (see `askedRowsSql`). */
    addresses: ReadonlyArray<string | undefined> = [],
  ): Promise<RowsAround> {
    if (ids.length === 0) return { hits: [], neighbours: [] };
    const where = scopeSql(scope).where;
    const placed = addresses.some((a) => a !== undefined);
    const hit = `${HIT_COLUMNS}, ${cosineSql('m.embedding', '$7')} AS hit_cosine, a.n`;
    // An id asked twice is one hit, at its first place.
    return this.around(
      scope,
      filter,
      query,
      seeds,
      vectors,
      `SELECT DISTINCT ON (c.hit_id) c.*
       FROM (${placed ? askedRowsSql(hit, where) : `SELECT ${hit} FROM unnest($6::uuid[]) WITH ORDINALITY a(id, n) JOIN memories m ON m.id = a.id WHERE ${where}`}) c
       ORDER BY c.hit_id, c.n`,
      ids,
      placed ? ids.map((_, i) => addresses[i] ?? null) : undefined,
    );
  }

  /**
   * As `rowsAround`, for the `k` of these memories whose vectors lie nearest `query` (equal cosines by id): the
   * database ranks the candidates by their stored vectors and sends only the rows it keeps, and their neighbours.
   */
  async nearestAround(
    scope: BankScope,
    filter: RowFilter,
    ids: readonly string[],
    query: Float32Array,
    k: number,
    seeds: number,
    vectors = false,
    /** Where each candidate was last read, by the ids' places, when known (see `askedRowsSql`). */
    addresses: ReadonlyArray<string | undefined> = [],
  ): Promise<RowsAround> {
    if (ids.length === 0) return { hits: [], neighbours: [] };
    const where = scopeSql(scope).where;
    const placed = addresses.some((a) => a !== undefined);
    const candidate = `${HIT_COLUMNS}, m.embedding <=> $7::vector AS distance`;
    // The distance is computed once a candidate: the sort, the rank and the kept rows' cosines all read it.
    return this.around(
      scope,
      filter,
      query,
      seeds,
      vectors,
      `SELECT c.hit_id, c.hit_tid, c.hit_table, c.hit_batch, c.hit_seq, (1 - c.distance)::float8 AS hit_cosine,
              row_number() OVER (ORDER BY c.distance, c.hit_id) AS n
       FROM (${placed ? askedRowsSql(candidate, where) : `SELECT ${candidate} FROM memories m WHERE ${where} AND m.id = ANY($6::uuid[])`}) c
       ORDER BY c.distance, c.hit_id LIMIT ${Math.max(1, Math.trunc(k))}`,
      ids,
      placed ? ids.map((_, i) => addresses[i] ?? null) : undefined,
    );
  }

  /**
   * The rows of the hits `hitsSql` answers (HIT_COLUMNS, their cosines `hit_cosine` and their ranks `n`), and the
   * neighbours of the first `seeds`. The hits' rows are read again by their row addresses within the same statement
   * (one snapshot, so each address still holds the row the hit was found in), with the cosines computed already: no
   * second index lookup or vector read for a hit.
   */
  private async around(
    scope: BankScope,
    filter: RowFilter,
    query: Float32Array,
    seeds: number,
    vectors: boolean,
    hitsSql: string,
    ids: readonly string[],
    /** A third parameter of `hitsSql`'s own ($8), when it has one. */
    third?: SqlParam,
  ): Promise<RowsAround> {
    const own: SqlParam[] = [[...ids], vectorLiteral(query), ...(third === undefined ? [] : [third])];
    const filtered = scopeSql(scope, filter, own.length);
    const hits: boolean[] = [];
    const rows = await this.pooled(
      this.db,
      scope.tenant,
      `WITH hit AS MATERIALIZED (${hitsSql}),
       seed AS (SELECT hit_batch AS batch_id, hit_seq AS seq FROM hit
                WHERE n <= ${Math.max(0, Math.trunc(seeds))} AND hit_batch IS NOT NULL),
       place AS (SELECT batch_id, seq - 1 AS seq FROM seed UNION SELECT batch_id, seq + 1 FROM seed)
       SELECT ${pooledColumnsWithCosine('hit.hit_cosine', vectors)}, true AS hit
       FROM hit JOIN memories m ON m.ctid = hit.hit_tid AND m.tableoid = hit.hit_table
       UNION ALL
       SELECT ${pooledColumns('$7', vectors)}, false FROM memories m
       WHERE ${filtered.where} AND (m.batch_id, m.seq) IN (SELECT batch_id, seq FROM place)`,
      [...filtered.params, ...own, ...filtered.after],
      vectors,
      hits,
    );
    return { hits: rows.filter((_, i) => hits[i]), neighbours: rows.filter((_, i) => !hits[i]) };
  }

  /** The memories that pass the filter at these (retain call, position) places: the neighbours of pooled memories. */
  async at(
    scope: BankScope,
    filter: RowFilter,
    places: ReadonlyArray<{ batchId: string; seq: number }>,
    query: Float32Array,
    vectors = false,
  ): Promise<PooledRow[]> {
    if (places.length === 0) return [];
    const { where, params, after } = scopeSql(scope, filter, 3);
    return this.pooled(
      this.db,
      scope.tenant,
      `SELECT ${pooledColumns('$8', vectors)} FROM memories m
       WHERE ${where} AND (m.batch_id, m.seq) IN (SELECT * FROM unnest($6::uuid[], $7::int[]))`,
      [...params, places.map((p) => p.batchId), places.map((p) => p.seq), vectorLiteral(query), ...after],
      vectors,
    );
  }

  private async pooled(
    q: Queryable,
    tenant: string,
    sql: string,
    params: readonly SqlParam[],
    vectors: boolean,
    /** Receives each row's `hit` column, for reads that select one. */
    hits?: boolean[],
  ): Promise<PooledRow[]> {
    const { rows, vectorTexts } =
      this.db.kind === 'external'
        ? await pooledAsFields(q, sql, params, vectors)
        : await pooledAsJson(q, sql, params, vectors);
    const memories = new Map((await this.reader.open(q, tenant, rows)).map((m) => [m.id, m] as const));
    const out: PooledRow[] = [];
    rows.forEach((row, i) => {
      const memory = memories.get(row.id);
      if (!memory || row.cosine === null) return;
      const parsed = parseTsvector(row.fts ?? '');
      const vector = vectorTexts?.[i];
      out.push({
        meta: indexedRowMeta(row, memory, parsed.length),
        cosine: row.cosine,
        keywords: new ParsedKeywords(parsed.terms, parsed.length),
        ...(vector ? { vector: vectorFromBase64(vector) } : {}),
      });
      hits?.push(row.hit === true);
    });
    return out;
  }
}

/** A pooled read's rows, and with them (when asked for) each row's vector as binaryVectorSql's text, by the rows' order. */
interface PooledRead {
  rows: PooledIndexedRow[];
  vectorTexts: ReadonlyArray<string | null> | undefined;
}

/** The SQL of each row's stored vector, read at the row's address (`row_tid`) in the same snapshot. */
const ADDRESSED_VECTOR = binaryVectorSql('v.embedding');
/** The row `v` at the address of the pooled row `r`: an address names a row within its partition only. */
const ADDRESSED = 'v.ctid = r.row_tid AND v.tableoid = r.row_table';

/**
 * A pooled read from a server, its rows as plain fields: formatting each column in its own output format costs the
 * server about a third of building one JSON text of the same rows, which must check every character for escaping.
 * The database every engine shares does the formatting; the engine's driver parses the fields.
 */
async function pooledAsFields(
  q: Queryable,
  sql: string,
  params: readonly SqlParam[],
  vectors: boolean,
): Promise<PooledRead> {
  const rows = await q.query<PooledIndexedRow & { vector?: string | null }>(
    vectors ? `SELECT r.*, ${ADDRESSED_VECTOR} AS vector FROM (${sql}) r JOIN memories v ON ${ADDRESSED}` : sql,
    params,
    { keepPlan: true },
  );
  return { rows, vectorTexts: vectors ? rows.map((r) => r.vector ?? null) : undefined };
}

/**
 * A pooled read from the embedded database, its rows as one JSON text (indexed-row.ts says why one text beats many
 * fields there). Their vectors, when asked for, come beside it as one text in the rows' order (both aggregates read the
 * same rows in turn): inside the JSON, the database would check every character of them for escaping.
 */
async function pooledAsJson(
  q: Queryable,
  sql: string,
  params: readonly SqlParam[],
  vectors: boolean,
): Promise<PooledRead> {
  const [all] = await q.query<{ rows: string | null; vectors: string | null }>(
    vectors
      ? `SELECT json_agg(r)::text AS rows, string_agg(coalesce(${ADDRESSED_VECTOR}, ''), ',') AS vectors
         FROM (${sql}) r JOIN memories v ON ${ADDRESSED}`
      : `SELECT json_agg(r)::text AS rows, NULL::text AS vectors FROM (${sql}) r`,
    params,
    { keepPlan: true },
  );
  return { rows: pooledRowsFromJson(all?.rows ?? '[]'), vectorTexts: all?.vectors?.split(',') };
}
