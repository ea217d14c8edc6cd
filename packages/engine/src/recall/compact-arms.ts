import type { CompactBank, CompactMatches } from '../vectors/compact-bank.js';
import type {
  BankScope,
  PostgresBankIndex,
  RowFilter,
  ScoredId,
  TimeWindow,
  WeightedTerm,
} from '../vectors/postgres-index.js';
import { bestFirst } from './arms.js';
import { bm25FromCounts } from './bm25.js';
import { unitCosine } from './postgres-arms.js';

/** How many nearest codes are reranked by their stored vectors for `k` results. */
export function rerankDepth(k: number): number {
  return Math.max(200, 4 * k);
}

/**
 * The semantic, temporal and keyword arms over banks' compact copies (vectors/compact-bank.ts), answering as the
 * Postgres tier's indexes do (ids and raw arm scores), so recall's Postgres-tier path reads the pool's rows and ranks
 * them the same way. The nearest codes are reranked by their stored vectors (as half floats), read from the database.
 * One instance serves one recall.
 */
export class CompactArms {
  /** Vectors read so far in this recall: the temporal arm's candidates are mostly the semantic arm's. */
  private readonly exact = new Map<string, Float32Array>();

  constructor(
    private readonly copies: readonly CompactBank[],
    private readonly database: Pick<PostgresBankIndex, 'vectors'>,
  ) {}

  /** The `k` memories nearest to `query` (cosine of the stored vectors) that pass the filter and lie in `window`. */
  async nearest(
    scope: BankScope,
    filter: RowFilter,
    query: Float32Array,
    k: number,
    window?: TimeWindow,
  ): Promise<ScoredId[]> {
    const want = rerankDepth(k);
    const ids: string[] = [];
    for (const copy of this.copies) {
      const keep = copy.keeps(filter);
      const rows = window ? copy.nearestIn(window, query, want, keep) : copy.nearest(query, want, keep);
      for (const row of rows) ids.push(copy.idAt(row));
    }
    const missing = ids.filter((id) => !this.exact.has(id));
    for (const [id, vector] of await this.database.vectors(scope, missing)) this.exact.set(id, vector);
    const scored: ScoredId[] = [];
    for (const id of ids) {
      const vector = this.exact.get(id);
      if (vector) scored.push({ id, score: unitCosine(vector, query) });
    }
    // Equal cosines tie by id, as on the Postgres tier.
    scored.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return scored.slice(0, Math.max(1, Math.trunc(k)));
  }

  /**
   * The `k` best BM25 scores among the rows holding any of `select` that pass the filter (at most `maxRows` of them),
   * the average length taken over the rows matched, as on the other tiers.
   */
  keyword(
    _scope: BankScope,
    filter: RowFilter,
    select: readonly string[],
    score: readonly WeightedTerm[],
    k: number,
    maxRows: number,
  ): Promise<ScoredId[]> {
    if (select.length === 0 || score.length === 0) return Promise.resolve([]);
    const terms = score.map((t) => t.term);
    const idf = score.map((t) => t.idf);
    const found: Array<{ copy: CompactBank; matches: CompactMatches }> = [];
    let rows = 0;
    let lengths = 0;
    for (const copy of this.copies) {
      if (rows >= maxRows) break;
      const matches = copy.matching(select, terms, copy.keeps(filter), maxRows - rows);
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
    return Promise.resolve(best.map((p) => ({ id: found[owners[p]!]!.copy.idAt(places[p]!), score: scores[p]! })));
  }
}
