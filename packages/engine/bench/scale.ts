import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadEngineConfig } from '../src/config/load.js';
import type { Embedder } from '../src/embeddings/embedder.js';
import { Engine } from '../src/engine.js';
import { retain, type RetainItem } from '../src/memory/retain.js';
import { DEFAULT_SPACE } from '../src/memory/types.js';
import { spawnEngineProcess } from '../src/process.js';
import { DatabaseCpu } from './database-cpu.js';
import { recallTiers } from './engine-metrics.js';
import { measureThroughput, throughputLines, type ThroughputPhase, type ThroughputPlan } from './engines-throughput.js';
import { JsonClient } from './http-json.js';
import { benchModelDir } from './local-model.js';
import { derivedMemory, derivedVector, loadLocomoText } from './locomo-text.js';
import { summarise, type LatencySummary } from './open-loop.js';
import { listOption, numberOption, parseBenchCommandLine, recordedSettings, yesNoOption } from './options.js';
import { rssMiB } from './process-stats.js';
import { StatementStats, statementLines, type StatementFigure } from './statement-stats.js';

/**
 * `npm run bench:scale`: recall latency, the engine's memory, start-up and index load time by bank size. The banks
 * are filled in bulk through the engine's own retain path (chunking, dedup, one transaction per 1,000 memories, the
 * store's batched INSERT with binary vectors) in this process, with the model call replaced by a table of vectors;
 * then the engine starts in its own process on that database and answers LoCoMo questions over HTTP.
 *
 * The memories are LoCoMo-derived (locomo-text.ts): the turns, then each turn followed by the first sentence of
 * another. Their vectors: every turn is embedded by the model once; the first --model-vectors memories are embedded by
 * the model as they are; every later one gets the normalised sum of its turn's vector and half its other turn's
 * vector (synthetic, since embedding a million texts takes hours). The run reports how close that comes to the
 * model's own vector on a sample.
 *
 * Sizes grow one database: each size adds memories to the previous fill, then restarts the engine.
 *
 * On an external database, `--throughput-engines 1,2` then measures recall throughput from one engine and from two on
 * the same database (engines-throughput.ts), after each size's measurement.
 */

const options = parseBenchCommandLine(process.argv.slice(2), {
  sizes: 'N1,N2 (memories in all, 10000,100000,1000000)',
  banks: 'N (1)',
  queries: 'N (300)',
  'model-vectors': 'N (10000)',
  json: 'FILE',
  env: 'KEY=VALUE (engine setting, also for the fill)',
  home: 'DIR (keep the filled database there; a later run with the same folder continues its fill)',
  settle: "SECONDS (0: wait up to that long after the first recalls for the banks' copies to load, then measure)",
  'pg-stat-statements': 'yes|no (no: on an external database, the time of each statement of the measured recalls)',
  'throughput-engines':
    'N1,N2 (none: on an external database, closed-loop recalls from that many engine processes in turn, e.g. 1,2)',
  'in-flight': 'N (4: recalls in flight per engine in the throughput phases)',
  'throughput-seconds': 'S (60: each throughput phase)',
});
const SIZES = listOption(options, 'sizes', [10_000, 100_000, 1_000_000]).sort((a, b) => a - b);
const BANKS = numberOption(options, 'banks', 1);
const QUERIES = numberOption(options, 'queries', 300);
const MODEL_VECTORS = numberOption(options, 'model-vectors', 10_000, 0);
const SETTLE_SECONDS = numberOption(options, 'settle', 0, 0);
const STATEMENTS = yesNoOption(options, 'pg-stat-statements', false);
const THROUGHPUT = throughputPlan();
/** Memories per retain call (one transaction) in the fill. */
const FILL_BATCH = 1000;
/** Synthetic memories whose vector is compared with the model's. */
const FIDELITY_SAMPLE = 200;

interface ScaleRun {
  /** Memories the fill sent, and the ones stored (identical texts are stored once). */
  memories: number;
  stored: number;
  banks: number;
  fill_seconds: number;
  startup_ms: number;
  /** The first recall of each bank after the start (the bank's index loads): the first, and all banks together. */
  first_recall_ms: number;
  first_recalls_total_ms: number;
  recall_ms: LatencySummary;
  /** Recalls answered by each tier (the recall trace's `tier`), the first ones included. */
  tiers: Record<string, number>;
  /** The median time of each stage of the measured recalls (the recall trace's stages; a stage some recalls skip, such
   * as `temporal`, over the recalls that have it). */
  stage_p50_ms: Record<string, number>;
  /** Seconds waited after the first recalls for the banks' copies to load (--settle). */
  settled_seconds: number;
  /**
   * On an external database whose server runs on this machine: the CPU time its server processes used during the
   * measured recalls, per recall (background loads included), read from /proc.
   */
  database_cpu_ms_per_recall: number | undefined;
  /** With --pg-stat-statements yes: each statement's figures over the measured recalls, largest total first. */
  statements: StatementFigure[] | undefined;
  /** With --throughput-engines: each phase's recall throughput, CPU per recall and the machine's load. */
  throughput: ThroughputPhase[] | undefined;
  /** The copies in the engine's cache by form at the end (`mnemos_recall_cache`): bytes as the cache counts them. */
  cache: Record<string, { bytes: number; memories: number }>;
  engine_rss_mib: number;
  engine_peak_rss_mib: number;
  database_mib: number | undefined;
}

/**
 * Retain's embedding step for the fill: vectors already known, looked up by text; a text not in the table (a memory
 * whose content retain changed, e.g. trimmed or cut into pieces) goes to the model.
 */
class VectorTable implements Embedder {
  readonly vectors = new Map<string, Float32Array>();
  readonly id: string;
  readonly dimension: number;

  constructor(private readonly model: Embedder) {
    this.id = model.id;
    this.dimension = model.dimension;
  }

  async embed(texts: readonly string[], kind: 'query' | 'document'): Promise<Float32Array[]> {
    const missing = texts.filter((t) => !this.vectors.has(t));
    const embedded = missing.length > 0 ? await this.model.embed(missing, kind) : [];
    missing.forEach((t, i) => this.vectors.set(t, embedded[i]!));
    return texts.map((t) => this.vectors.get(t)!);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** The file in a kept home (--home) that says how many memories its fill sent. */
const FILL_MARK = 'bench-scale-fill.json';

/** --throughput-engines with its two companions, or undefined; refused on the embedded database, which one engine holds. */
function throughputPlan(): ThroughputPlan | undefined {
  if (!options.values.has('throughput-engines')) {
    const stray = ['in-flight', 'throughput-seconds'].find((name) => options.values.has(name));
    if (stray !== undefined) throw new Error(`--${stray} needs --throughput-engines; ${options.usage}`);
    return undefined;
  }
  const engines = listOption(options, 'throughput-engines', []);
  if (engines.some((n, i) => !Number.isInteger(n) || (i > 0 && n <= engines[i - 1]!))) {
    throw new Error(`--throughput-engines ${options.values.get('throughput-engines')}: whole numbers, ascending (1,2)`);
  }
  if (options.env.MNEMOS_API_DATABASE_URL === undefined) {
    throw new Error(
      '--throughput-engines needs an external database that engines share: add --env MNEMOS_API_DATABASE_URL=postgres://...',
    );
  }
  return {
    engines,
    inFlight: numberOption(options, 'in-flight', 4),
    seconds: numberOption(options, 'throughput-seconds', 60),
  };
}

interface Mark {
  filled: number;
}

const bankOf = (k: number) => `scale-${k % BANKS}`;

function cosine(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** The cache's copies by form, from the engine's `mnemos_recall_cache` gauge. */
function recallCache(metrics: string): Record<string, { bytes: number; memories: number }> {
  const cache: Record<string, { bytes: number; memories: number }> = {};
  for (const m of metrics.matchAll(/^mnemos_recall_cache\{form="([a-z]+)",measure="(bytes|memories)"\} (\d+)$/gm)) {
    const form = (cache[m[1]!] ??= { bytes: 0, memories: 0 });
    form[m[2] as 'bytes' | 'memories'] = Number(m[3]);
  }
  return cache;
}

/** Size on disk of a folder and everything in it, in MiB. */
function folderMiB(dir: string): number {
  let bytes = 0;
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(d, entry.name));
      else bytes += statSync(join(d, entry.name)).size;
    }
  };
  walk(dir);
  return bytes / 1024 / 1024;
}

/** The sizes are counted from an empty database: one that already holds the bench's banks would skew them. */
async function refuseFilledDatabase(engine: Engine): Promise<void> {
  const [row] = await engine.db.query<{ n: number | string }>(
    "SELECT count(*) AS n FROM memories WHERE tenant = 'default' AND bank_id LIKE 'scale-%'",
  );
  if (Number(row?.n ?? 0) > 0) {
    throw new Error(
      `the database already holds ${row?.n} memories in the bench's banks (scale-*): point ` +
        '--env MNEMOS_API_DATABASE_URL at an empty database',
    );
  }
}

class ScaleFill {
  private turnVectors: Float32Array[] = [];
  filled = 0;
  fidelity: { mean: number; min: number; sample: number } | undefined;

  constructor(
    private readonly turns: readonly string[],
    private readonly env: Record<string, string>,
    /** Where the count of memories sent is kept, when the database outlives the run (--home). */
    private readonly mark: string | undefined,
  ) {
    if (mark !== undefined && existsSync(mark)) this.filled = (JSON.parse(readFileSync(mark, 'utf8')) as Mark).filled;
  }

  /** Adds memories up to `total` (over all banks) through an engine opened in this process. */
  async fillTo(total: number): Promise<number> {
    // A kept home already filled this far needs no engine here: the measurement starts its own.
    if (this.filled >= total) return 0;
    const started = performance.now();
    const quiet = {
      info: () => undefined,
      warn: (m: string) => console.warn(m),
      error: (m: string) => console.error(m),
    };
    const engine = await Engine.open(loadEngineConfig({ ...process.env, ...this.env }), quiet);
    try {
      if (this.filled === 0) await refuseFilledDatabase(engine);
      if (this.turnVectors.length === 0) {
        this.turnVectors = await engine.embedder.embed(this.turns, 'document');
        this.fidelity = await this.measureFidelity(engine.embedder);
      }
      const table = new VectorTable(engine.embedder);
      const deps = { db: engine.db, store: engine.store, embedder: table };
      for (let k0 = this.filled; k0 < total; k0 += FILL_BATCH * BANKS) {
        for (let b = 0; b < BANKS; b++) {
          const ks: number[] = [];
          for (let k = k0 + b; k < total && ks.length < FILL_BATCH; k += BANKS) ks.push(k);
          if (ks.length === 0) continue;
          const texts = ks.map((k) => derivedMemory(this.turns, k));
          const vectors = await this.vectorsFor(engine.embedder, ks, texts);
          table.vectors.clear();
          texts.forEach((text, i) => table.vectors.set(text.trim(), vectors[i]!));
          const items: RetainItem[] = texts.map((content) => ({
            content,
            timestamp: undefined,
            context: undefined,
            metadata: undefined,
            tags: undefined,
            documentId: undefined,
            entities: undefined,
          }));
          await retain(deps, { tenant: 'default', bankId: bankOf(ks[0]!), space: DEFAULT_SPACE }, items);
        }
        process.stdout.write(`\r  filled ${Math.min(total, k0 + FILL_BATCH * BANKS)} of ${total}`);
      }
      process.stdout.write('\n');
      this.filled = total;
      if (this.mark !== undefined) writeFileSync(this.mark, JSON.stringify({ filled: total } satisfies Mark));
    } finally {
      await engine.close();
    }
    return (performance.now() - started) / 1000;
  }

  /** The model's vectors for memories below --model-vectors, synthetic ones for the rest. */
  private async vectorsFor(model: Embedder, ks: readonly number[], texts: readonly string[]): Promise<Float32Array[]> {
    const byModel = ks.flatMap((k, i) => (k < MODEL_VECTORS && k >= this.turns.length ? [i] : []));
    const embedded =
      byModel.length > 0
        ? await model.embed(
            byModel.map((i) => texts[i]!),
            'document',
          )
        : [];
    const exact = new Map(byModel.map((i, j) => [i, embedded[j]!]));
    return ks.map((k, i) => exact.get(i) ?? derivedVector(this.turnVectors, k));
  }

  /** Cosine between the synthetic vector and the model's own for a sample of memories past the turns. */
  private async measureFidelity(model: Embedder) {
    const ks = Array.from({ length: FIDELITY_SAMPLE }, (_, i) => this.turns.length + i * 4999);
    const exact = await model.embed(
      ks.map((k) => derivedMemory(this.turns, k)),
      'document',
    );
    const cosines = ks.map((k, i) => cosine(derivedVector(this.turnVectors, k), exact[i]!));
    return {
      mean: cosines.reduce((a, b) => a + b, 0) / cosines.length,
      min: Math.min(...cosines),
      sample: cosines.length,
    };
  }
}

async function measure(
  env: Record<string, string>,
  questions: readonly string[],
): Promise<Omit<ScaleRun, 'fill_seconds'>> {
  const started = performance.now();
  const engine = await spawnEngineProcess(env);
  const startup = performance.now() - started;
  const http = new JsonClient(1);
  /** Each stage's time in every measured recall (the recall's trace). */
  const stageTimes = new Map<string, number[]>();
  const recall = async (bank: number, query: string, measured: boolean) => {
    const t = performance.now();
    const a = await http.post(`${engine.url}/v1/default/banks/scale-${bank}/memories/recall`, { query, trace: true });
    if (a.status !== 200) throw new Error(`recall answered ${a.status}: ${JSON.stringify(a.json)}`);
    const elapsed = performance.now() - t;
    const trace = a.json.trace as { stages: Array<{ stage: string; ms: number }> } | undefined;
    for (const s of measured ? (trace?.stages ?? []) : []) {
      const times = stageTimes.get(s.stage) ?? [];
      stageTimes.set(s.stage, times);
      times.push(s.ms);
    }
    return elapsed;
  };
  const databaseUrl = env.MNEMOS_API_DATABASE_URL;
  const cpu = databaseUrl === undefined ? undefined : await DatabaseCpu.open(databaseUrl);
  const statements = databaseUrl !== undefined && STATEMENTS ? await StatementStats.open(databaseUrl) : undefined;
  try {
    let stored = 0;
    for (let b = 0; b < BANKS; b++) {
      const a = await http.get(`${engine.url}/v1/default/banks/scale-${b}/memories?limit=0`);
      stored += Number(a.json.total);
    }
    const first: number[] = [];
    for (let b = 0; b < BANKS; b++) first.push(await recall(b, questions[b % questions.length]!, false));
    const settling = performance.now();
    await settle(engine.url, stored);
    const settled = (performance.now() - settling) / 1000;
    /**
     * Another engine brought to where this one is: a first recall into each bank, the --settle wait for its copy, then
     * the measured recalls, unmeasured, so that it has compiled the same code paths before it is measured.
     */
    const load = async (url: string) => {
      const ask = (k: number) =>
        http.post(`${url}/v1/default/banks/${bankOf(k)}/memories/recall`, { query: questions[k % questions.length] });
      for (let b = 0; b < BANKS; b++) await ask(b);
      const started = performance.now();
      const loaded = await settle(url, stored);
      const seconds = (performance.now() - started) / 1000;
      for (let i = 0; i < QUERIES; i++) await ask(i + BANKS);
      return { seconds, loaded };
    };
    const times: number[] = [];
    await statements?.reset();
    const before = await cpu?.read();
    for (let i = 0; i < QUERIES; i++) {
      times.push(await recall(i % BANKS, questions[(i + BANKS) % questions.length]!, true));
    }
    const used = before && (await cpu?.since(before));
    const figures = await statements?.read();
    const pid = engine.child.pid;
    const metrics = await fetch(`${engine.url}/metrics`).then((r) => r.text());
    const tiers = recallTiers(metrics);
    const cache = recallCache(metrics);
    const rss = { engine_rss_mib: rssMiB(pid), engine_peak_rss_mib: rssMiB(pid, 'VmHWM') };
    const throughput =
      THROUGHPUT &&
      (await measureThroughput(
        {
          first: engine,
          env,
          load,
          // The questions after the measured ones, each bank in turn.
          request: (k) => ({
            bank: bankOf(k),
            query: questions[(k + QUERIES + BANKS) % questions.length]!,
          }),
          databaseCpu: cpu,
        },
        THROUGHPUT,
      ));
    return {
      memories: 0,
      stored,
      banks: BANKS,
      startup_ms: startup,
      first_recall_ms: first[0]!,
      first_recalls_total_ms: first.reduce((a, b) => a + b, 0),
      recall_ms: summarise(times),
      stage_p50_ms: Object.fromEntries([...stageTimes].map(([stage, ms]) => [stage, summarise(ms).p50])),
      tiers,
      cache,
      settled_seconds: settled,
      database_cpu_ms_per_recall: used ? (used.seconds * 1000) / QUERIES : undefined,
      statements: figures,
      throughput,
      ...rss,
      database_mib: env.MNEMOS_API_DATABASE_URL === undefined ? folderMiB(join(env.MNEMOS_HOME!, 'db')) : undefined,
    };
  } finally {
    http.close();
    await cpu?.close();
    await statements?.close();
    await engine.stop();
  }
}

/**
 * Waits up to --settle seconds for the engine's cache to hold the banks' `stored` memories (in either form), polling
 * its metrics each second: the recalls measured then are the steady state's, not those answered while a copy loads.
 * Says whether the cache holds them.
 */
async function settle(url: string, stored: number): Promise<boolean> {
  const deadline = performance.now() + SETTLE_SECONDS * 1000;
  for (;;) {
    const cache = recallCache(await fetch(`${url}/metrics`).then((r) => r.text()));
    const held = Object.values(cache).reduce((sum, form) => sum + form.memories, 0);
    if (held >= stored) return true;
    if (performance.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

async function main() {
  const kept = options.values.get('home');
  const home = kept === undefined ? mkdtempSync(join(tmpdir(), 'mnemos-bench-scale-')) : resolve(kept);
  // On an external database no engine writes into the home, but the fill's mark goes there.
  mkdirSync(home, { recursive: true });
  const env: Record<string, string> = {
    MNEMOS_HOME: home,
    MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: benchModelDir(),
    MNEMOS_API_PORT: '0',
    MNEMOS_API_HOST: '127.0.0.1',
    MNEMOS_API_LOG_LEVEL: 'warn',
    ...options.env,
  };
  const loadAverage = loadavg();
  const locomo = loadLocomoText();
  const fill = new ScaleFill(locomo.turns, env, kept === undefined ? undefined : join(home, FILL_MARK));
  const runs: ScaleRun[] = [];
  console.log(
    `Scale bench: ${SIZES.join(', ')} memories over ${BANKS} bank(s), load average ${loadAverage[0]!.toFixed(1)}`,
  );
  try {
    for (const size of SIZES) {
      const fillSeconds = await fill.fillTo(size);
      const run = { ...(await measure(env, locomo.questions)), memories: size, fill_seconds: fillSeconds };
      runs.push(run);
      const r = run.recall_ms;
      console.log(
        `${String(size).padStart(9)} memories (${run.stored} stored): recall p50 ${r.p50.toFixed(1)} / p95 ${r.p95.toFixed(1)} ms, ` +
          `RSS ${run.engine_rss_mib.toFixed(0)} MiB (peak ${run.engine_peak_rss_mib.toFixed(0)}), ` +
          `start-up ${run.startup_ms.toFixed(0)} ms, first recall ${run.first_recall_ms.toFixed(0)} ms, ` +
          `fill ${fillSeconds.toFixed(0)} s, tiers ${JSON.stringify(run.tiers)}` +
          (run.settled_seconds > 0 ? `, settled ${run.settled_seconds.toFixed(0)} s` : '') +
          (run.database_cpu_ms_per_recall === undefined
            ? ''
            : `, database CPU ${run.database_cpu_ms_per_recall.toFixed(1)} ms a recall`) +
          '\n    cache: ' +
          Object.entries(run.cache)
            .filter(([, c]) => c.memories > 0)
            .map(([form, c]) => `${form} ${c.memories} memories, ${(c.bytes / c.memories).toFixed(0)} bytes each`)
            .join('; ') +
          '\n    stage p50 (ms): ' +
          Object.entries(run.stage_p50_ms)
            .map(([stage, ms]) => `${stage} ${ms.toFixed(1)}`)
            .join(', ') +
          (run.statements === undefined ? '' : `\n${statementLines(run.statements, QUERIES).join('\n')}`) +
          (run.throughput === undefined
            ? ''
            : `\n    recall throughput, closed loop:\n${throughputLines(run.throughput).join('\n')}`),
      );
    }
    if (fill.fidelity) {
      console.log(
        `synthetic vectors against the model's (${fill.fidelity.sample} memories): ` +
          `cosine mean ${fill.fidelity.mean.toFixed(3)}, min ${fill.fidelity.min.toFixed(3)}`,
      );
    }
    const json = options.values.get('json');
    if (json !== undefined) {
      const out = {
        bench: 'scale',
        date: new Date().toISOString(),
        machine: { cores: availableParallelism(), load_average_at_start: loadAverage, node: process.version },
        options: {
          sizes: SIZES,
          banks: BANKS,
          queries: QUERIES,
          model_vectors: MODEL_VECTORS,
          settle: SETTLE_SECONDS,
          throughput: THROUGHPUT,
          env: recordedSettings(options.env),
        },
        synthetic_vector_fidelity: fill.fidelity,
        runs,
      };
      writeFileSync(resolve(json), `${JSON.stringify(out, null, 2)}\n`);
    }
  } finally {
    if (kept === undefined) rmSync(home, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
