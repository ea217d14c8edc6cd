import { plaintextCodec } from '../src/crypto/codec.js';
import { openExternalDatabase } from '../src/db/postgres.js';
import { MemoryStore } from '../src/memory/store.js';
import { KEYWORD_SELECT_ROWS, keywordPlan } from '../src/recall/arms.js';
import { CompactArms } from '../src/recall/compact-arms.js';
import { PostgresBankIndex, type WeightedTerm } from '../src/vectors/storage/postgres-index.js';
import { VectorCache } from '../src/vectors/vector-cache.js';
import { DatabaseCpu } from './database-cpu.js';
import { loadLocomoText } from './locomo-text.js';
import { parseBenchOptions, numberOption } from './options.js';
import { percentile } from './stats.js';
import { CURRENT_DEFAULT_SPACE } from './current-filter.js';

/**
 * `npm run bench:keyword-cost -- --url URL --bank scale-0`: what the keyword arm costs on a bank of an external
 * database (one `npm run bench:scale -- --home DIR` filled), per LoCoMo question, in the ways weighed for large banks:
 *
 * - `sql`: the Postgres tier's statement (GIN lookup, BM25 in SQL) with the row budget (no hits past it);
 * - `sql-all`: the same statement scoring every row the plan selects (no budget);
 * - `rum`: a RUM index's own ranking (`ORDER BY fts <=> query LIMIT k`), when the bank has one (`--rum`, which builds
 *   it first and reports the build);
 * - `engine`: BM25 over the compact copy's postings in this process (the database does nothing).
 *
 * Database figures are the CPU its server processes used (/proc, so the server must run on this machine), summed
 * over the questions; engine figures are this process's time. Bank size and document frequencies come from the
 * statistics the writes keep, as in recall.
 */
const USAGE = 'options: --url URL (the database) --bank ID (scale-0) --queries N (100) --k N (100) --rum yes|no (no)';
const options = parseBenchOptions(process.argv.slice(2), ['url', 'bank', 'queries', 'k', 'rum'], USAGE);
const url = options.values.get('url');
if (url === undefined) throw new Error(`--url is required; ${USAGE}`);
const BANK = options.values.get('bank') ?? 'scale-0';
const QUERIES = numberOption(options, 'queries', 100);
const K = numberOption(options, 'k', 100);
const RUM = options.values.get('rum') === 'yes';

interface Plan {
  select: string[];
  score: WeightedTerm[];
}

async function main() {
  const db = await openExternalDatabase(url!, { poolSize: 2, statementTimeoutMs: 0 });
  const cpu = await DatabaseCpu.open(url!);
  if (!cpu) throw new Error('the database server does not run on this machine: its CPU cannot be read');
  const store = new MemoryStore(db, plaintextCodec);
  const search = new PostgresBankIndex(db, store);
  const scope = { tenant: 'default', bankIds: [BANK] };
  const questions = loadLocomoText().questions.slice(0, QUERIES);
  const plans: Plan[] = [];
  let overBudget = 0;
  for (const q of questions) {
    const terms = await plaintextCodec.indexTerms(db, 'default', [BANK], q);
    const { size, frequencies } = await search.statistics(scope, terms);
    const plan = keywordPlan(terms, frequencies, size);
    if (!plan) continue;
    if (plan.selective.reduce((n, t) => n + (frequencies.get(t) ?? 0), 0) > KEYWORD_SELECT_ROWS) overBudget++;
    plans.push({ select: plan.selective, score: plan.present.map((term, i) => ({ term, idf: plan.idf[i]! })) });
  }
  console.log(
    `${plans.length} of ${questions.length} questions hold a term of the bank; ${overBudget} select more rows than the budget`,
  );

  /** Each question's BM25 top k, as the statement scoring every selected row answers it. */
  let exact: string[][] = [];
  const measure: Measure = async (name, run) => {
    const times: number[] = [];
    const found: string[][] = [];
    const before = await cpu.read();
    for (const p of plans) {
      const t = performance.now();
      found.push(await run(p));
      times.push(performance.now() - t);
    }
    const used = await cpu.since(before);
    // The share of BM25's top k that the way answers among its own k (1 for BM25 itself, ties aside).
    const kept = exact.length === 0 ? 1 : mean(found.map((ids, i) => shared(exact[i]!, ids)));
    console.log(
      `${name.padEnd(8)} database CPU ${((used.seconds * 1000) / plans.length).toFixed(1)} ms a query; ` +
        `wall p50 ${percentile(times, 50).toFixed(1)} / p95 ${percentile(times, 95).toFixed(1)} ms; ` +
        `BM25's top ${K} kept ${kept.toFixed(3)}`,
    );
    return found;
  };
  exact = await measure('sql-all', (p) =>
    ids(search.keyword(scope, CURRENT_DEFAULT_SPACE, p.select, p.score, K, Number.MAX_SAFE_INTEGER)),
  );
  await measure('sql', (p) =>
    ids(search.keyword(scope, CURRENT_DEFAULT_SPACE, p.select, p.score, K, KEYWORD_SELECT_ROWS)),
  );
  if (RUM) await measureRum(db, plans, measure);
  const loadStarted = performance.now();
  const copies = await new VectorCache(store, 384).compactBanks(db, 'default', [BANK]);
  console.log(`compact copy loaded in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`);
  const arms = new CompactArms(copies, search);
  await measure('engine', (p) => ids(arms.keyword(scope, CURRENT_DEFAULT_SPACE, p.select, p.score, K)));
  await cpu.close();
  await db.close();
}

/** Builds the bank's RUM index (reported), then ranks by it. */
async function measureRum(
  db: Awaited<ReturnType<typeof openExternalDatabase>>,
  plans: readonly Plan[],
  measure: Measure,
) {
  await db.exec('CREATE EXTENSION IF NOT EXISTS rum');
  const started = performance.now();
  await db.exec(
    `CREATE INDEX IF NOT EXISTS bench_rum_fts ON memories USING rum (fts rum_tsvector_ops)
     WHERE tenant = 'default' AND bank_id = '${BANK.replace(/'/g, "''")}'`,
  );
  const [size] = await db.query<{ mib: number }>("SELECT pg_relation_size('bench_rum_fts') / 1048576.0 AS mib");
  console.log(
    `rum index built in ${((performance.now() - started) / 1000).toFixed(1)} s, ${Number(size?.mib).toFixed(0)} MiB`,
  );
  const query = (p: Plan) => p.select.map((t) => `'${t.replace(/'/g, "''")}'`).join(' | ');
  await measure('rum', (p) =>
    ids(
      db.query<{ id: string }>(
        `SELECT id FROM memories WHERE tenant = 'default' AND bank_id = $1 AND fts @@ $2::tsquery
       ORDER BY fts <=> $2::tsquery LIMIT ${K}`,
        [BANK, query(p)],
      ),
    ),
  );
}

/** The ids of what a way answers. */
function ids(hits: Promise<ReadonlyArray<{ id: string }>>): Promise<string[]> {
  return hits.then((h) => h.map((x) => x.id));
}

/** Measures one way of answering the keyword arm over every question; answers each question's ids. */
type Measure = (name: string, run: (p: Plan) => Promise<string[]>) => Promise<string[][]>;

function shared(exact: readonly string[], found: readonly string[]): number {
  if (exact.length === 0) return 1;
  const set = new Set(found);
  return exact.filter((id) => set.has(id)).length / exact.length;
}

function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
