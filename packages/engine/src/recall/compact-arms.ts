import type { CompactBank, CompactMatches } from '../vectors/kernels/compact-bank.js';
import type {
  BankScope,
  PooledRow,
  PostgresBankIndex,
  RowFilter,
  ScoredId,
  TimeWindow,
  WeightedTerm,
} from '../vectors/storage/postgres-index.js';
import { bestFirst, NEIGHBOUR_SEEDS } from './arms.js';
import type { ReadAhead } from './postgres-arms.js';
import { bm25FromCounts } from '../keywords/bm25.js';

/** How many of the nearest sign codes are narrowed by their two-bit codes, for `k` results. */
export function candidateDepth(k: number): number {
  return Math.max(400, 12 * k);
}

/** How many of those, by their two-bit codes, have their rows read and are ranked by their vectors, for `k` results. */
export function refinedDepth(k: number): number {
  return Math.max(50, 2 * k);
}

/**
 * The semantic, temporal and keyword arms over banks' compact copies (vectors/kernels/compact-bank.ts), answering as the
 * Postgres tier's indexes do (ids and raw arm scores), so recall's Postgres-tier path ranks the pool's rows the same
 * way. The nearest sign codes are narrowed by the two-bit codes held in memory, and the database ranks those by their
 * stored vectors and sends the rows of the best and of their neighbours, in one statement; the pool takes them as
 * read. One instance serves one recall.
 */
export class CompactArms {
  /** The rows of the arms' hits, and of the best hits' neighbours, read in this recall. */
  private readonly hits = new Map<string, PooledRow>();
  private readonly neighbours: PooledRow[] = [];
  /** The hits whose neighbours were read. */
  private readonly seeded = new Set<string>();

  /** Per copy, the rows that pass the request's filter expression, when it has one. */
  private readonly passing: ReadonlyArray<Uint8Array | undefined>;

  /**
   * `passing`: the ids of the banks' memories that pass the request's filter expression, when it has one; `vectors`:
   * the rows read bring their stored vectors (the recall reorders by them).
   */
  constructor(
    private readonly copies: readonly CompactBank[],
    private readonly database: Pick<PostgresBankIndex, 'nearestAround'>,
    passing?: Iterable<string>,
    private readonly vectors = false,
  ) {
    const ids = passing === undefined ? undefined : [...passing];
    this.passing = copies.map((copy) => (ids === undefined ? undefined : copy.rowMask(ids)));
  }

  /** What the arms read, for the pool: those rows and neighbours need not be read again. */
  get readAhead(): ReadAhead {
    return { hits: [...this.hits.values()], neighbours: this.neighbours, seeded: this.seeded };
  }

  /** The `k` memories nearest to `query` (cosine of the stored vectors) that pass the filter and lie in `window`. */
  async nearest(
    scope: BankScope,
    filter: RowFilter,
    query: Float32Array,
    k: number,
    window?: TimeWindow,
  ): Promise<ScoredId[]> {
    const ids: string[] = [];
    const addresses: Array<string | undefined> = [];
    for (const [i, copy] of this.copies.entries()) {
      const keep = copy.keeps(filter, this.passing[i]);
      const depth = candidateDepth(k);
      const nearest = window ? copy.nearestIn(window, query, depth, keep) : copy.nearest(query, depth, keep);
      for (const row of copy.refine(query, nearest, refinedDepth(k))) {
        ids.push(copy.idAt(row));
        addresses.push(copy.addressAt(row));
      }
    }
    const read = await this.database.nearestAround(
      scope,
      filter,
      ids,
      query,
      k,
      NEIGHBOUR_SEEDS,
      this.vectors,
      addresses,
    );
    const scored: ScoredId[] = [];
    for (const row of read.hits) {
      this.hits.set(row.meta.id, row);
      scored.push({ id: row.meta.id, score: row.cosine });
    }
    for (const row of read.neighbours) this.neighbours.push(row);
    // Equal cosines tie by id, as on the Postgres tier (and in the database's ranking, which chose the seeds).
    scored.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const hit of scored.slice(0, NEIGHBOUR_SEEDS)) this.seeded.add(hit.id);
    return scored.slice(0, Math.max(1, Math.trunc(k)));
  }

  /**
   * The `k` best BM25 scores among every row holding any of `select` that passes the filter, the average length taken
   * over the rows matched, as on the other tiers. The postings are in memory, so every match is scored here, as on
   * the in-memory tier: no row budget (the Postgres tier's `maxRows`) applies.
   */
  keyword(
    _scope: BankScope,
    filter: RowFilter,
    select: readonly string[],
    score: readonly WeightedTerm[],
    k: number,
  ): Promise<ScoredId[]> {
    if (select.length === 0 || score.length === 0) return Promise.resolve([]);
    const terms = score.map((t) => t.term);
    const idf = score.map((t) => t.idf);
    const found: Array<{ copy: CompactBank; matches: CompactMatches }> = [];
    let rows = 0;
    let lengths = 0;
    for (const [i, copy] of this.copies.entries()) {
      const matches = copy.matching(select, terms, copy.keeps(filter, this.passing[i]));
      for (const n of matches.lengths) lengths += n;
      rows += matches.rows.length;
      found.push({ copy, matches });
    }
    const avg = rows === 0 ? 1 : lengths / rows || 1;
    const scores = new Float64Array(rows);
    // Each scored row's copy and row number: its id is made only if it is among the best.
    const owners = new Int32Array(rows);
    const places = new Int32Array(rows);
    let i = 0;
    found.forEach(({ matches }, owner) => {
      for (let r = 0; r < matches.rows.length; r++, i++) {
        scores[i] = bm25FromCounts(matches.counts, r * terms.length, matches.lengths[r]!, idf, avg);
        owners[i] = owner;
        places[i] = matches.rows[r]!;
      }
    });
    const best = bestFirst(scores, Math.max(1, Math.trunc(k)));
    return Promise.resolve(
      best.map((p) => {
        const copy = found[owners[p]!]!.copy;
        const address = copy.addressAt(places[p]!);
        return { id: copy.idAt(places[p]!), score: scores[p]!, ...(address === undefined ? {} : { address }) };
      }),
    );
  }
}
