import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from '../src/db/database.js';
import { startEngine } from '../src/index.js';
import { vectorLiteral } from '../src/memory/vector-literal.js';
import { recall, type RecallDependencies } from '../src/recall/pipeline.js';
import type { RecallRequest } from '../src/recall/types.js';
import { parseFilter } from '../src/filters/parse.js';
import { PostgresBankIndex } from '../src/vectors/storage/postgres-index.js';
import { VectorCache } from '../src/vectors/vector-cache.js';
import { derivedMemory, loadLocomoText } from './locomo-text.js';
import { ownEngineEnv } from './locomo.js';
import { rssMiB } from './process-stats.js';
import { ms, percentile } from './stats.js';

/**
 * `npm run bench:tiers`: recall latency on each tier, on one bank grown to each size given, in one process on the
 * embedded database. The bank holds LoCoMo-derived memories (locomo-text.ts) with random unit vectors (real embeddings
 * of so many texts would take the model hours; a random vector is the hard case for HNSW), inserted in bulk; the
 * queries are LoCoMo questions, each recalled on both tiers in turn. Reports, per size, the bank's HNSW index build
 * time, what a single-row insert costs once the index exists, the process's resident memory (the embedded database
 * runs on one of its threads), the in-memory copy's load time, and recall p50 / p95 per tier with the Postgres tier's
 * slowest stages.
 *
 *   npm run bench:tiers -- --memories 10000,100000 --queries 60
 *
 * With `--filter JSON` (a filter expression, docs/api.md "Filters"; `--filter default` takes FILTER_DEFAULT) each query
 * is also recalled with that filter on each tier, the compact tier too, and a second table gives the filter's cost:
 * p50 with / without. The memories then carry metadata `project` (one of four values, in turn) and an occurred_at
 * spread over 2023-2024, so the default filter passes about one memory in eight.
 *
 *   npm run bench:tiers -- --memories 10000 --queries 40 --filter default
 */

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const SIZES = (args.get('memories') ?? '10000').split(',').map(Number);
const QUERIES = Number(args.get('queries') ?? 60);
/** The first recalls of each tier warm it and are not counted. */
const WARM_UP = 5;
const BANK = 'tiers';
const FILTER_DEFAULT = { and: [{ 'metadata.project': 'apollo' }, { timestamp: { gte: '2024-01-01' } }] };
const FILTER_TEXT = args.get('filter');
const FILTER =
  FILTER_TEXT === undefined
    ? undefined
    : parseFilter(FILTER_TEXT === 'default' ? FILTER_DEFAULT : (JSON.parse(FILTER_TEXT) as unknown), '/filter');
const PROJECTS = ['apollo', 'zeus', 'hermes', 'ares'];
const TWO_YEARS_MS = 2 * 365 * 86_400_000;
const INSERT_BATCH = 500;

function unitVector(dimension: number): number[] {
  const v = Array.from({ length: dimension }, () => Math.random() - 0.5);
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => x / norm);
}

/** Single-row inserts timed into the indexed bank (each pays the HNSW insert). */
const INSERT_PROBES = 50;

/** Milliseconds per memory of single-row inserts into the bank once its HNSW index exists (median). */
async function insertCost(db: Database, turns: readonly string[], from: number, dimension: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < INSERT_PROBES; i++) {
    const t = derivedMemory(turns, from + i);
    const started = performance.now();
    await db.query(
      `INSERT INTO memories (id, tenant, bank_id, space, type, text, content_hash, fts, embedding)
       VALUES (gen_random_uuid(), 'default', $1, 'default', 'raw', $2, md5($3::text), to_tsvector('english', $2),
               $4::vector)`,
      [BANK, t, `probe-${from + i}`, vectorLiteral(unitVector(dimension))],
    );
    times.push(performance.now() - started);
  }
  return percentile(times, 50);
}

const home = mkdtempSync(join(tmpdir(), 'mnemos-bench-tiers-'));
const engine = await startEngine({
  env: ownEngineEnv(home, { MNEMOS_API_RECALL_POSTGRES_TIER_MIN_MEMORIES: 'off' }),
});
try {
  const { db, store, codec, embedder } = engine.engine;
  const text = loadLocomoText();
  let stored = 0;
  console.log(
    '| memories | HNSW build | insert with the index | RSS | in-memory load | memory p50 / p95 | postgres p50 / p95 | ' +
      'postgres stages (p50) |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const size of SIZES) {
    for (; stored < size; stored += INSERT_BATCH) {
      const texts = Array.from({ length: Math.min(INSERT_BATCH, size - stored) }, (_, i) =>
        derivedMemory(text.turns, stored + i),
      );
      await db.query(
        `INSERT INTO memories (id, tenant, bank_id, space, type, text, content_hash, fts, embedding, metadata,
                               occurred_at)
         SELECT gen_random_uuid(), 'default', $1, 'default', 'raw', t, md5(($4::int + n)::text),
                to_tsvector('english', t), v::vector, jsonb_build_object('project', ($5::text[])[(($4::int + n) % 4) + 1]),
                timestamptz '2023-01-01' + (random() * $6::float8) * interval '1 millisecond'
         FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS x(t, v, n)`,
        [BANK, texts, texts.map(() => vectorLiteral(unitVector(embedder.dimension))), stored, PROJECTS, TWO_YEARS_MS],
      );
    }
    const search = new PostgresBankIndex(db, store);
    const buildStart = performance.now();
    search.indexes.request('default', BANK);
    await search.indexes.built('default', BANK);
    const build = performance.now() - buildStart;
    const insert = await insertCost(db, text.turns, stored, embedder.dimension);
    stored += INSERT_PROBES;
    const cache = new VectorCache(store, embedder.dimension, Number.MAX_SAFE_INTEGER);
    const loadStart = performance.now();
    await cache.banks(db, 'default', [BANK]);
    const load = performance.now() - loadStart;
    const tiers: Array<[string, RecallDependencies]> = [
      ['memory', { db, index: cache, codec, embedder }],
      ['postgres', { db, index: cache, codec, embedder, postgres: { search, minMemories: 0 } }],
    ];
    if (FILTER) {
      // Its own cache: the engine holds one copy of a bank, so a shared cache would reload the bank at every switch.
      const compactCache = new VectorCache(store, embedder.dimension, Number.MAX_SAFE_INTEGER);
      tiers.push(['compact', { db, index: compactCache, codec, embedder, compact: { search, minMemories: 0 } }]);
    }
    const filtered = new Map<string, number[]>(tiers.map(([name]) => [name, []]));
    /** The compact tier's selection of the memories passing the filter, per recall. */
    const preSelect: number[] = [];
    const times = new Map<string, number[]>(tiers.map(([name]) => [name, []]));
    const stages = new Map<string, number[]>();
    for (let i = 0; i < QUERIES + WARM_UP; i++) {
      const request: RecallRequest = {
        tenant: 'default',
        bankId: BANK,
        space: 'default',
        query: text.questions[(i * 37) % text.questions.length]!,
        maxTokens: 4096,
        candidates: 100,
        includeOrg: false,
        types: undefined,
        tags: undefined,
        tagsMatch: 'any',
        queryTimestamp: new Date(),
        trace: true,
      };
      for (const [name, deps] of tiers) {
        if (FILTER) {
          const started = performance.now();
          const outcome = await recall(deps, { ...request, filter: FILTER });
          if (i >= WARM_UP) filtered.get(name)!.push(performance.now() - started);
          const select = outcome.trace?.stages.find((s) => s.stage === 'filter');
          if (select && i >= WARM_UP) preSelect.push(select.ms);
        }
        const started = performance.now();
        const outcome = await recall(deps, request);
        if (i < WARM_UP) continue;
        times.get(name)!.push(performance.now() - started);
        if (name !== 'postgres') continue;
        for (const s of outcome.trace?.stages ?? []) {
          const values = stages.get(s.stage);
          if (values) values.push(s.ms);
          else stages.set(s.stage, [s.ms]);
        }
      }
    }
    const p = (name: string) => `${ms(percentile(times.get(name)!, 50))} / ${ms(percentile(times.get(name)!, 95))}`;
    const slowest = [...stages]
      .map(([stage, values]) => [stage, percentile(values, 50)] as const)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 4)
      .map(([stage, value]) => `${stage} ${ms(value)}`)
      .join(', ');
    console.log(
      `| ${size} | ${(build / 1000).toFixed(1)} s | ${ms(insert)} per memory | ${rssMiB(process.pid).toFixed(0)} MiB | ` +
        `${(load / 1000).toFixed(1)} s | ${p('memory')} | ${p('postgres')} | ${slowest} |`,
    );
    if (FILTER) {
      console.log(`\nfilter ${JSON.stringify(FILTER_TEXT === 'default' ? FILTER_DEFAULT : FILTER_TEXT)}`);
      console.log('| tier | p50 without | p50 with filter | with / without |\n|---|---|---|---|');
      for (const [name] of tiers) {
        const without = percentile(times.get(name)!, 50);
        const withFilter = percentile(filtered.get(name)!, 50);
        console.log(`| ${name} | ${ms(without)} | ${ms(withFilter)} | ${(withFilter / without).toFixed(2)} |`);
      }
      if (preSelect.length > 0) console.log(`compact tier's pre-selection p50: ${ms(percentile(preSelect, 50))}`);
    }
  }
} finally {
  await engine.close();
  rmSync(home, { recursive: true, force: true });
}
