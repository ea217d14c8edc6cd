import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Database } from '../src/db/database.js';
import { ensureEmbeddingSchema } from '../src/db/embedding-schema.js';
import { openDatabase } from '../src/db/open.js';
import { bankIndexSql } from '../src/db/migrations/007_recall_index.js';
import { analyzeMoved, bankPartitionName, createBankPartition, moveBankRows } from '../src/db/bank-partition.js';
import { vectorLiteral } from '../src/memory/vector-literal.js';
import { PostgresBankIndex } from '../src/vectors/storage/postgres-index.js';
import { summarise, type LatencySummary } from './open-loop.js';
import { listOption, numberOption, parseBenchOptions, yesNoOption } from './options.js';
import { testPostgresUrl } from './test-assets.js';
import { CURRENT_DEFAULT_SPACE } from './current-filter.js';

/**
 * `npm run bench:bank-indexes`: the vector index layouts for large banks on a PostgreSQL server with pgvector, on
 * `--banks` banks of `--memories` memories each, filled into the shared partition of `memories` (a database of its
 * own on the server of MNEMOS_TEST_PG_URL, dropped at the end), for each of `--layouts`:
 *
 * - engine: what the engine does for a bank that grows large on a server, for every bank in turn: the bank moved into
 *   a partition of its own (db/bank-partition.ts), then its index built there, each step timed with the rows it read
 *   of each partition (runs last: it empties the shared partition);
 * - per bank: a partial HNSW index per bank (`CREATE INDEX CONCURRENTLY ... WHERE tenant = .. AND bank_id = ..`),
 *   each build timed with the rows it read from the table;
 * - partitioned: the same rows copied into a table partitioned by bank, one partition's index build timed with the
 *   rows it read (what a build costs when it reads one bank's partition);
 * - shared: one HNSW index over every bank, built once, searched with the bank filter and pgvector's iterative scan
 *   through the Postgres tier's own nearest-neighbour statement.
 *
 * For each layout: recall@10 against the exact answer and the statement's latency, and what a retain of 100 memories
 * into one bank costs once the index exists. The vectors are synthetic but clustered like text embeddings: each is the
 * normalised sum of one of 512 topic vectors and two noise vectors (unit random vectors scaled by 0.6 and 0.35),
 * inserted in bulk by the server itself; queries come from the same mix and are not in the table.
 *
 *   npm run bench:bank-indexes -- --banks 10 --memories 100000 --queries 100
 */

const USAGE =
  'options: --banks N (10) --memories N (per bank, 100000) --queries N (per layout, 100) --per-bank-builds N ' +
  '(banks whose partial index is built, 10) --maintenance-mib N (the bench database maintenance_work_mem, 1024) ' +
  '--keep yes|no (no) --layouts engine,per-bank,shared,partitioned (all) --candidates N1,N2 (the k asked of the statement, of which the ' +
  'first 10 count; 10) --json FILE';
const options = parseBenchOptions(
  process.argv.slice(2),
  ['banks', 'memories', 'queries', 'per-bank-builds', 'maintenance-mib', 'layouts', 'candidates', 'json', 'keep'],
  USAGE,
);
const BANKS = numberOption(options, 'banks', 10);
const PER_BANK = numberOption(options, 'memories', 100_000);
const QUERIES = numberOption(options, 'queries', 100);
const PER_BANK_BUILDS = Math.min(BANKS, numberOption(options, 'per-bank-builds', BANKS));
const MAINTENANCE_MIB = numberOption(options, 'maintenance-mib', 1024);
const LAYOUTS = new Set((options.values.get('layouts') ?? 'engine,per-bank,shared,partitioned').split(','));
for (const layout of LAYOUTS) {
  if (!['engine', 'per-bank', 'shared', 'partitioned'].includes(layout))
    throw new Error(`--layouts: no layout ${layout}`);
}
/** The k the statement is asked for (its ef_search grows with it), of which the best 10 are scored. */
const CANDIDATES = listOption(options, 'candidates', [10]);
/** Keeps the bench's database (named at the end) to look at afterwards; dropped otherwise. */
const KEEP = yesNoOption(options, 'keep', false);
const DIMENSION = 384;
const TOPICS = 512;
const NOISE = 4096;
const K = 10;
const TENANT = 'bench';
const FILL_CHUNK = 20_000;

const bankId = (b: number): string => `bank-${b}`;

function randomUnit(scale: number): number[] {
  // Box-Muller normals give directions uniform on the sphere.
  const v = Array.from({ length: DIMENSION }, () => {
    const u = 1 - Math.random();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * Math.random());
  });
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => (x / norm) * scale);
}

function add(...vs: number[][]): Float32Array {
  const out = new Float32Array(DIMENSION);
  for (const v of vs) for (let i = 0; i < DIMENSION; i++) out[i]! += v[i]!;
  const norm = Math.sqrt(out.reduce((s, x) => s + x * x, 0));
  return out.map((x) => x / norm);
}

async function admin(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  return c;
}

/**
 * Heap rows read by sequential scans of `table` so far, as the server's statistics count them: this connection's
 * counts are sent first (the builds run on it), then read in a fresh snapshot.
 */
async function rowsRead(c: pg.Client, table: string): Promise<number> {
  await c.query('SELECT pg_stat_force_next_flush()');
  await c.query('SELECT pg_stat_clear_snapshot()');
  const [row] = (
    await c.query<{ n: string }>('SELECT seq_tup_read::text AS n FROM pg_stat_user_tables WHERE relname = $1', [table])
  ).rows;
  return Number(row?.n ?? 0);
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await work();
  return { ms: performance.now() - start, value };
}

interface Query {
  bank: string;
  vector: Float32Array;
  exact: Set<string>;
}

interface RecallFigures {
  recall_at_10: number;
  latency_ms: LatencySummary;
  plan: string;
}

/** The Postgres tier's nearest-neighbour statement for each query: recall@10 against the exact answer, and latency. */
async function measureRecall(
  db: Database,
  search: PostgresBankIndex,
  queries: readonly Query[],
  candidates = K,
): Promise<RecallFigures> {
  const latencies: number[] = [];
  let found = 0;
  for (const q of queries) {
    const { ms, value } = await timed(async () =>
      (await search.nearest({ tenant: TENANT, bankIds: [q.bank] }, CURRENT_DEFAULT_SPACE, q.vector, candidates)).slice(
        0,
        K,
      ),
    );
    latencies.push(ms);
    found += value.filter((hit) => q.exact.has(hit.id)).length;
  }
  const q = queries[0]!;
  const plan = await db.transaction(async (tx) => {
    await tx.query("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)");
    const rows = await tx.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN SELECT m.id FROM memories m WHERE m.tenant = $1 AND m.bank_id = $2 AND m.embedding IS NOT NULL
       AND m.space = 'default' AND m.state = 'valid' ORDER BY m.embedding <=> $3::vector LIMIT ${K}`,
      [TENANT, q.bank, vectorLiteral(q.vector)],
    );
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
  return {
    recall_at_10: found / (queries.length * K),
    latency_ms: summarise(latencies),
    plan: plan
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => /Scan|Limit|Sort/.test(l))
      .map((l) => l.replace(/'\[[^\]]*\]'::vector/g, '$q').replace(/\s+\(cost=.*\)$/, ''))
      .join(' / '),
  };
}

/**
 * Inserts `rows` synthetic memories into `table` for bank `b` through the server's own generator, into the bank's
 * partition as a retain writes them.
 */
function fillSql(table: string, b: number, from: number, count: number): string {
  return `INSERT INTO ${table} (id, tenant, bank_id, space, type, text, fts, content_hash, embedding, created_at, part)
    SELECT gen_random_uuid(), '${TENANT}', '${bankId(b)}', 'default', 'world', t.text, to_tsvector('english', t.text),
           md5('${b}:' || g), l2_normalize(c.v + n1.v + n2.v), now() - g * interval '1 minute',
           COALESCE((SELECT part FROM banks WHERE tenant = '${TENANT}' AND bank_id = '${bankId(b)}'), 0)
    FROM generate_series(${from}, ${from + count - 1}) g
    CROSS JOIN LATERAL (SELECT 'memory ' || g || ' of bank ${b}: ' || md5(g::text) || ' ' || md5((g + 1)::text)
                               || ' about topic ' || (hashint4(g * 7 + ${b}) & ${TOPICS - 1}) AS text) t
    JOIN bench_topics c ON c.i = (hashint4(g * 7 + ${b}) & ${TOPICS - 1})
    JOIN bench_noise n1 ON n1.i = (hashint4(g * 13 + ${b}) & ${NOISE - 1})
    JOIN bench_noise2 n2 ON n2.i = (hashint4(g * 31 + ${b}) & ${NOISE - 1})`;
}

async function insertCost(c: pg.Client, b: number, from: number): Promise<number> {
  // One retain's transaction of 100 memories, through the table's triggers (change log, statistics, history).
  const { ms } = await timed(async () => {
    await c.query('BEGIN');
    await c.query(fillSql('memories', b, from, 100));
    await c.query('COMMIT');
  });
  return ms;
}

/** Rows read by sequential scans (an index build's reads among them) of each partition of `memories`, by name. */
async function rowsReadByPartition(c: pg.Client): Promise<Map<string, number>> {
  await c.query('SELECT pg_stat_force_next_flush()');
  await c.query('SELECT pg_stat_clear_snapshot()');
  const rows = (
    await c.query<{ name: string; n: string }>(
      `SELECT relname AS name, seq_tup_read::text AS n FROM pg_stat_user_tables
       WHERE relid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'memories'::regclass)`,
    )
  ).rows;
  return new Map(rows.map((r) => [r.name, Number(r.n)]));
}

/** What was read of each partition between two counts: of `own`, and of all the others together. */
function readBetween(
  before: Map<string, number>,
  after: Map<string, number>,
  own: string,
): { own: number; others: number } {
  let others = 0;
  for (const [name, n] of after) if (name !== own) others += n - (before.get(name) ?? 0);
  return { own: (after.get(own) ?? 0) - (before.get(own) ?? 0), others };
}

/**
 * Every bank in turn as the engine treats a bank that grows large on a server (recall-index.ts): a partition made
 * for it, its rows moved there in one transaction, then its index built there with the engine's statement, the move
 * and the build on the connection whose reads are counted.
 */
async function engineLayout(
  c: pg.Client,
  db: Database,
  search: PostgresBankIndex,
  queries: readonly Query[],
  nextSeq: () => number,
): Promise<Record<string, unknown>> {
  const log = (line: string): void => void process.stdout.write(`${line}\n`);
  const tx = {
    query: async <T extends object>(text: string, params?: readonly unknown[]) =>
      (await c.query<T>(text, params as unknown[])).rows,
  };
  const banks: Array<Record<string, number>> = [];
  for (let b = 0; b < BANKS; b++) {
    const made = await createBankPartition(db);
    const start = await rowsReadByPartition(c);
    const move = await timed(async () => {
      await c.query('BEGIN');
      try {
        const part = await moveBankRows(tx, TENANT, bankId(b), made);
        await c.query('COMMIT');
        return part;
      } catch (error) {
        await c.query('ROLLBACK');
        throw error;
      }
    });
    const analyzed = await timed(() => analyzeMoved(tx, move.value));
    const own = bankPartitionName(move.value);
    const moved = await rowsReadByPartition(c);
    const build = await timed(() => c.query(bankIndexSql(TENANT, bankId(b), true, move.value)));
    const built = await rowsReadByPartition(c);
    const buildRead = readBetween(moved, built, own);
    const moveRead = readBetween(start, moved, own);
    banks.push({
      move_seconds: move.ms / 1000,
      move_rows_read_by_scans: moveRead.own + moveRead.others,
      analyze_seconds: analyzed.ms / 1000,
      build_seconds: build.ms / 1000,
      build_rows_read_own_partition: buildRead.own,
      build_rows_read_other_partitions: buildRead.others,
    });
    log(
      `engine, bank ${b + 1}: move ${(move.ms / 1000).toFixed(1)} s, build ${(build.ms / 1000).toFixed(1)} s ` +
        `reading ${buildRead.own} rows of its partition and ${buildRead.others} of others`,
    );
  }
  const recall = await measureRecall(db, search, queries);
  log(`engine: recall@10 ${recall.recall_at_10.toFixed(3)}, p50 ${recall.latency_ms.p50.toFixed(1)} ms`);
  const sum = (key: string): number => banks.reduce((s, x) => s + (x[key] ?? 0), 0);
  return {
    banks,
    move_seconds_total: sum('move_seconds'),
    build_seconds_total: sum('build_seconds'),
    build_rows_read_other_partitions_total: sum('build_rows_read_other_partitions'),
    ...recall,
    insert_100_ms: await insertCost(c, 0, nextSeq()),
  };
}

async function main(): Promise<void> {
  const server = testPostgresUrl();
  const name = `bench_bank_indexes_${randomBytes(4).toString('hex')}`;
  const root = await admin(server);
  await root.query(`CREATE DATABASE ${name}`);
  await root.query(`ALTER DATABASE ${name} SET maintenance_work_mem = '${MAINTENANCE_MIB}MB'`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  const home = mkdtempSync(join(tmpdir(), 'mnemos-bank-indexes-'));
  const { db } = await openDatabase({ home, databaseUrl: url.toString() });
  const c = await admin(url.toString());
  const search = new PostgresBankIndex(db, { open: () => Promise.resolve([]) });
  const out: Record<string, unknown> = {
    banks: BANKS,
    memories_per_bank: PER_BANK,
    queries: QUERIES,
    maintenance_work_mem_mib: MAINTENANCE_MIB,
  };
  const log = (line: string): void => void process.stdout.write(`${line}\n`);
  try {
    await ensureEmbeddingSchema(db, 'bench:synthetic', DIMENSION);
    const topics = Array.from({ length: TOPICS }, () => randomUnit(1));
    const noise = Array.from({ length: NOISE }, () => randomUnit(0.6));
    const noise2 = Array.from({ length: NOISE }, () => randomUnit(0.35));
    for (const [table, vs] of [
      ['bench_topics', topics],
      ['bench_noise', noise],
      ['bench_noise2', noise2],
    ] as const) {
      await c.query(`CREATE TABLE ${table} (i int PRIMARY KEY, v vector(${DIMENSION}))`);
      for (let i = 0; i < vs.length; i += 256) {
        const part = vs.slice(i, i + 256);
        await c.query(`INSERT INTO ${table} SELECT * FROM unnest($1::int[], $2::vector[])`, [
          part.map((_, j) => i + j),
          part.map((v) => vectorLiteral(v)),
        ]);
      }
    }

    // The fill skips the triggers (bulk load); the banks' rows are written as the triggers would leave them.
    const fill = await timed(async () => {
      await c.query("SET session_replication_role = 'replica'");
      for (let b = 0; b < BANKS; b++) {
        await c.query('INSERT INTO banks (tenant, bank_id, name, memory_count) VALUES ($1, $2, $2, $3)', [
          TENANT,
          bankId(b),
          PER_BANK,
        ]);
        for (let from = 0; from < PER_BANK; from += FILL_CHUNK) {
          await c.query(fillSql('memories', b, from, Math.min(FILL_CHUNK, PER_BANK - from)));
          process.stdout.write(`\r  filled bank ${b + 1} of ${BANKS}: ${Math.min(PER_BANK, from + FILL_CHUNK)}`);
        }
      }
      await c.query("SET session_replication_role = 'origin'");
      await c.query('VACUUM ANALYZE memories');
    });
    process.stdout.write('\n');
    out.fill_seconds = fill.ms / 1000;
    log(`fill: ${BANKS} x ${PER_BANK} memories in ${(fill.ms / 1000).toFixed(0)} s`);

    // Queries: the same mix of topic and noise, not in the table; the exact answer by a full sort of the bank.
    const queries: Query[] = [];
    for (let i = 0; i < QUERIES; i++) {
      const bank = bankId(i % BANKS);
      const vector = add(
        topics[Math.floor(Math.random() * TOPICS)]!,
        noise[Math.floor(Math.random() * NOISE)]!,
        randomUnit(0.35),
      );
      const exact = await db.transaction(async (tx) => {
        await tx.query("SELECT set_config('enable_indexscan', 'off', true)");
        return tx.query<{ id: string }>(
          `SELECT id FROM memories WHERE tenant = $1 AND bank_id = $2 ORDER BY embedding <=> $3::vector LIMIT ${K}`,
          [TENANT, bank, vectorLiteral(vector)],
        );
      });
      queries.push({ bank, vector, exact: new Set(exact.map((r) => r.id)) });
    }
    const exactRecall = await measureRecall(db, search, queries);
    out.no_index = exactRecall;
    log(`no vector index: p50 ${exactRecall.latency_ms.p50.toFixed(1)} ms, plan ${exactRecall.plan}`);
    let next = PER_BANK;
    out.insert_100_no_index_ms = await insertCost(c, 0, (next += 100) - 100);

    // The reads of other connections are counted within 10 s of their going idle, so that is waited out first.
    await new Promise((r) => setTimeout(r, 11_000));
    if (LAYOUTS.has('per-bank')) {
      // Per bank: the partial index of each bank in turn, with what each build read.
      // The statement the engine runs for a bank in the shared partition (recall-index.ts), on the connection whose
      // reads are counted.
      const builds: Array<{ ms: number; rows_read: number }> = [];
      for (let b = 0; b < PER_BANK_BUILDS; b++) {
        const before = await rowsRead(c, 'memories_shared');
        const { ms } = await timed(() => c.query(bankIndexSql(TENANT, bankId(b), true)));
        builds.push({ ms, rows_read: (await rowsRead(c, 'memories_shared')) - before });
        log(`per-bank build ${b + 1}: ${(ms / 1000).toFixed(1)} s, rows read ${builds.at(-1)!.rows_read}`);
      }
      const built = new Set(Array.from({ length: PER_BANK_BUILDS }, (_, b) => bankId(b)));
      const perBank = await measureRecall(
        db,
        search,
        queries.filter((q) => built.has(q.bank)),
      );
      out.per_bank = {
        builds,
        build_seconds_total: builds.reduce((s, x) => s + x.ms, 0) / 1000,
        ...perBank,
        insert_100_ms: await insertCost(c, 0, (next += 100) - 100),
        insert_100_other_bank_ms: await insertCost(c, BANKS - 1, (next += 100) - 100),
      };
      log(`per bank: recall@10 ${perBank.recall_at_10.toFixed(3)}, p50 ${perBank.latency_ms.p50.toFixed(1)} ms`);
      for (let b = 0; b < PER_BANK_BUILDS; b++) {
        await c.query(
          `DROP INDEX ${
            (
              await c.query<{ n: string }>(
                `SELECT c.relname AS n FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
           WHERE i.indrelid = 'memories_shared'::regclass AND pg_get_indexdef(c.oid) LIKE '%hnsw%' LIMIT 1`,
              )
            ).rows[0]!.n
          }`,
        );
      }
    }

    if (LAYOUTS.has('shared')) {
      // Shared: one index over every bank (all in the shared partition), built once.
      const before = await rowsRead(c, 'memories_shared');
      const shared = await timed(() =>
        c.query(
          'CREATE INDEX CONCURRENTLY memories_embedding_hnsw ON memories_shared USING hnsw (embedding vector_cosine_ops)',
        ),
      );
      const sharedRead = (await rowsRead(c, 'memories_shared')) - before;
      log(`shared build: ${(shared.ms / 1000).toFixed(1)} s, rows read ${sharedRead}`);
      const sharedRecall = await measureRecall(db, search, queries);
      const byCandidates: Record<string, RecallFigures> = {};
      for (const n of CANDIDATES) {
        byCandidates[n] = await measureRecall(db, search, queries, n);
        log(
          `shared, ${n} asked: recall@10 ${byCandidates[n].recall_at_10.toFixed(3)}, p50 ${byCandidates[n].latency_ms.p50.toFixed(1)} ms`,
        );
      }
      out.shared = {
        build_seconds: shared.ms / 1000,
        rows_read: sharedRead,
        ...sharedRecall,
        by_candidates: byCandidates,
        insert_100_ms: await insertCost(c, 0, (next += 100) - 100),
      };
      log(
        `shared: recall@10 ${sharedRecall.recall_at_10.toFixed(3)}, p50 ${sharedRecall.latency_ms.p50.toFixed(1)} ms`,
      );
      await c.query('DROP INDEX memories_embedding_hnsw');
    }

    if (LAYOUTS.has('partitioned')) {
      // Partitioned by bank: one partition per bank, the rows copied as they are; one partition's build is timed.
      await c.query(`CREATE TABLE memories_by_bank (LIKE memories INCLUDING DEFAULTS) PARTITION BY LIST (bank_id)`);
      for (let b = 0; b < BANKS; b++) {
        await c.query(
          `CREATE TABLE memories_by_bank_${b} PARTITION OF memories_by_bank FOR VALUES IN ('${bankId(b)}')`,
        );
      }
      const copy = await timed(() => c.query('INSERT INTO memories_by_bank SELECT * FROM memories'));
      await c.query('VACUUM ANALYZE memories_by_bank');
      const readBefore = await rowsRead(c, 'memories_by_bank_0');
      const others = await rowsRead(c, 'memories_by_bank_1');
      const partition = await timed(() =>
        c.query(
          'CREATE INDEX CONCURRENTLY memories_by_bank_0_hnsw ON memories_by_bank_0 USING hnsw (embedding vector_cosine_ops)',
        ),
      );
      out.partitioned = {
        copy_seconds: copy.ms / 1000,
        one_partition_build_seconds: partition.ms / 1000,
        rows_read: (await rowsRead(c, 'memories_by_bank_0')) - readBefore,
        rows_read_other_partition: (await rowsRead(c, 'memories_by_bank_1')) - others,
      };
      log(`partitioned: one partition's build ${(partition.ms / 1000).toFixed(1)} s`);
    }

    if (LAYOUTS.has('engine')) out.engine = await engineLayout(c, db, search, queries, () => (next += 100) - 100);
    log(JSON.stringify(out, null, 2));
    const json = options.values.get('json');
    if (json !== undefined) writeFileSync(json, `${JSON.stringify(out, null, 2)}\n`);
  } finally {
    await c.end();
    await db.close();
    if (KEEP) log(`kept: the database ${name}`);
    else await root.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await root.end();
    rmSync(home, { recursive: true, force: true });
  }
}

await main();
