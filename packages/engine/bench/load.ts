import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLocalEmbedder } from '../src/embeddings/local.js';
import { spawnEngineProcess, type EngineProcess } from '../src/process.js';
import { embeddingBatches, textsPerCall } from './engine-metrics.js';
import { JsonClient, type JsonAnswer } from './http-json.js';
import { benchModelDir, benchModelDtype } from './local-model.js';
import {
  batchesByLength,
  bestModelRate,
  derivedMemory,
  embedPass,
  loadLocomoText,
  type LocomoText,
} from './locomo-text.js';
import {
  mixedArrivals,
  runOpenLoop,
  searchCapacity,
  summarise,
  type Completion,
  type LatencySummary,
  type Operation,
} from './open-loop.js';
import { listOption, numberOption, parseBenchOptions, recordedSettings } from './options.js';
import { cpuPerRequestByThread, machineTicks, rssMiB, perThreadCpuSeconds } from './process-stats.js';
import { rng } from './synthetic.js';

/**
 * `npm run bench:load`: the load agents generate. Requests arrive open-loop (a Poisson process at a fixed offered
 * rate; 80% recalls with LoCoMo questions, 20% single retains of LoCoMo-derived turns) over 32 keep-alive
 * connections, against an engine in its own process on the embedded database, pre-filled with LoCoMo-derived
 * memories. Latency counts from each request's scheduled send time (open-loop.ts). In the same run, with the engine
 * idle, the model alone embeds a sample of the same mix in its best batching: its rate is the model-only capacity the
 * offered rates are fractions of.
 *
 * Procedure: one run at 40% of the model-only capacity (the latency bar), then the capacity search: up in steps of
 * 20% of the model-only capacity while recall p95 stays <= 100 ms with no errors, then bisection between the last rate
 * that met it and the first that did not (--bisect rounds). After each run every acknowledged retain is read back.
 *
 * `--mode engine,floor` runs the same procedure, after the engine's, against the floor (bench/floor-server.ts): the
 * engine's HTTP app, model and batcher with no engine work behind them. Its CPU per request is what HTTP, JSON and
 * batching cost on top of the model; the engine's beyond it is the engine's own.
 */

const USAGE =
  'options: --memories N (bank size, 10000) --seconds S (per run, 30) --connections C (32) --rates R1,R2 (offered ' +
  'requests/s instead of the search) --bisect N (2) --seed N (1) --model-sample N (texts of the mix the model alone ' +
  'embeds, 640) --json FILE --env KEY=VALUE (engine setting) --cpu-prof DIR (the engine writes CPU profiles there; ' +
  'each run reports its profile window for cpu-profile.ts) --retain-share F1,F2 (0.2; 0 for recalls only, 1 for ' +
  'retains only; with --rates each rate runs at each share, else the search uses the first) --mode engine,floor (which ' +
  'servers take the load, in turn: the engine, and the floor (the same HTTP app, model and batcher doing no engine ' +
  'work); engine)';
const options = parseBenchOptions(
  process.argv.slice(2),
  [
    'memories',
    'seconds',
    'connections',
    'rates',
    'bisect',
    'seed',
    'model-sample',
    'json',
    'cpu-prof',
    'retain-share',
    'mode',
  ],
  USAGE,
);
const BANK_SIZE = numberOption(options, 'memories', 10_000);
const SECONDS = numberOption(options, 'seconds', 30);
const CONNECTIONS = numberOption(options, 'connections', 32);
const BISECT = numberOption(options, 'bisect', 2, 0);
const SEED = numberOption(options, 'seed', 1);
/** The shares of retains in the mix; the first is the mix of the model-only rate and of the capacity search. */
const RETAIN_SHARES = shareList(options.values.get('retain-share') ?? '0.2');
const RETAIN_SHARE = RETAIN_SHARES[0]!;
/** Texts of the mix the model alone embeds for its capacity. */
const MODEL_SAMPLE = numberOption(options, 'model-sample', 640);
const BAR_SHARE = 0.4;
const CAPACITY_P95_MS = 100;
const CPU_PROFILE_DIR = options.values.get('cpu-prof');
const MODES = modeList(options.values.get('mode') ?? 'engine');
/** Memories the floor's bank holds: enough for its one real recall to answer as many results as the engine's. */
const FLOOR_MEMORIES = 1_000;
const FLOOR_SERVER = resolve(fileURLToPath(new URL('.', import.meta.url)), 'floor-server.ts');

type Mode = 'engine' | 'floor';

interface LoadRun {
  offered_per_s: number;
  retain_share: number;
  share_of_model: number;
  seconds: number;
  requests: number;
  achieved_per_s: number;
  errors: number;
  acknowledged_retains: number;
  /** Null for the floor, which stores nothing. */
  lost: number | null;
  recall_ms: LatencySummary;
  retain_ms: LatencySummary;
  /** Time requests waited for a free connection (or for the client to reach them), p95. */
  queued_p95_ms: number;
  client_cpu_ms_per_request: number;
  engine_cpu_ms_per_request: number;
  /** The engine's main thread, then its other threads from the busiest down (model, database, V8's helpers). */
  engine_cpu_ms_per_request_by_thread: { main: number; others: number[] };
  /** Texts per call to the model (the engine's batches, from its /metrics). */
  texts_per_model_call: number;
  /** With --cpu-prof: the run's start and end on the profiles' clock (monotonic microseconds). */
  profile_window_us?: [number, number];
  machine_idle_share: number;
  engine_rss_mib: number;
}

type Answered = Completion<Operation, JsonAnswer>;

/** The k-th retain of a run: a LoCoMo-derived memory after the ones the bank was filled with (all distinct). */
function retainText(locomo: LocomoText, k: number): string {
  return derivedMemory(locomo.turns, BANK_SIZE + k);
}

function question(locomo: LocomoText, k: number): string {
  return locomo.questions[k % locomo.questions.length]!;
}

class LoadBench {
  private readonly http = new JsonClient(CONNECTIONS);
  private recalls = 0;
  private retains = 0;
  private seed = SEED;
  /** The size of the last warm-up recall's answer, in bytes of JSON. */
  recallAnswerBytes = 0;

  constructor(
    private readonly engine: EngineProcess,
    private readonly locomo: LocomoText,
    readonly mode: Mode,
  ) {}

  private get memories(): string {
    return `${this.engine.url}/v1/default/banks/load/memories`;
  }

  /** Fills the bank with `size` memories and recalls 20 times; the floor then leaves its engine work (floor-server.ts). */
  async fill(size: number): Promise<number> {
    const started = performance.now();
    for (let n = 0; n < size; n += 100) {
      const items = Array.from({ length: Math.min(100, size - n) }, (_, i) => ({
        content: derivedMemory(this.locomo.turns, n + i),
      }));
      const a = await this.http.post(this.memories, { items });
      if (a.status !== 200) throw new Error(`fill failed: ${JSON.stringify(a.json)}`);
    }
    for (let i = 0; i < 20; i++) {
      const a = await this.http.post(`${this.memories}/recall`, { query: question(this.locomo, i) });
      this.recallAnswerBytes = Buffer.byteLength(JSON.stringify(a.json));
    }
    if (this.mode === 'floor') {
      const a = await this.http.post(`${this.engine.url}/bench/floor`, {});
      if (a.status !== 200) throw new Error(`the floor did not switch: ${JSON.stringify(a.json)}`);
    }
    return (performance.now() - started) / 1000;
  }

  private send(op: Operation): Promise<JsonAnswer> {
    return op === 'recall'
      ? this.http.post(`${this.memories}/recall`, { query: question(this.locomo, this.recalls++) })
      : this.http.post(this.memories, { content: retainText(this.locomo, this.retains++) });
  }

  async run(rate: number, modelRate: number, retainShare: number): Promise<LoadRun> {
    this.seed += 2;
    const arrivals = mixedArrivals(rate, SECONDS, retainShare, rng(this.seed), rng(this.seed + 1));
    const pid = this.engine.child.pid;
    const batchesBefore = await embeddingBatches(this.engine.url);
    const engineBefore = perThreadCpuSeconds(pid);
    const clientBefore = process.cpuUsage();
    const ticksBefore = machineTicks();
    const started = performance.now();
    const startedUs = monotonicUs();
    const done = await runOpenLoop(arrivals, CONNECTIONS, (op) => this.send(op));
    const endedUs = monotonicUs();
    const wall = (performance.now() - started) / 1000;
    const client = process.cpuUsage(clientBefore);
    const engineAfter = perThreadCpuSeconds(pid);
    const ticksAfter = machineTicks();
    const batchesAfter = await embeddingBatches(this.engine.url);
    const failed = (c: Answered) => c.error !== undefined || c.result?.status !== 200;
    const acknowledged = done.filter((c) => c.op === 'retain' && !failed(c)).map((c) => memoryIdOf(c.result));
    const engineCpu = sum(engineAfter.values()) - sum(engineBefore.values());
    return {
      offered_per_s: rate,
      retain_share: retainShare,
      share_of_model: rate / modelRate,
      seconds: SECONDS,
      requests: done.length,
      achieved_per_s: done.length / wall,
      errors: done.filter(failed).length,
      acknowledged_retains: acknowledged.length,
      lost: this.mode === 'floor' ? null : await this.lost(acknowledged),
      recall_ms: summarise(done.filter((c) => c.op === 'recall' && !failed(c)).map((c) => c.latency)),
      retain_ms: summarise(done.filter((c) => c.op === 'retain' && !failed(c)).map((c) => c.latency)),
      queued_p95_ms: summarise(done.map((c) => c.queued)).p95,
      client_cpu_ms_per_request: (client.user + client.system) / 1000 / Math.max(1, done.length),
      engine_cpu_ms_per_request: (1000 * engineCpu) / Math.max(1, done.length),
      engine_cpu_ms_per_request_by_thread: cpuPerRequestByThread(pid, engineBefore, engineAfter, done.length),
      texts_per_model_call: textsPerCall(batchesBefore, batchesAfter),
      ...(CPU_PROFILE_DIR === undefined ? {} : { profile_window_us: [startedUs, endedUs] as [number, number] }),
      machine_idle_share: (ticksAfter.idle - ticksBefore.idle) / (ticksAfter.total - ticksBefore.total),
      engine_rss_mib: rssMiB(pid),
    };
  }

  /** How many acknowledged retains cannot be read back (each id fetched once the run is over). */
  private async lost(ids: readonly string[]): Promise<number> {
    let lost = 0;
    for (let i = 0; i < ids.length; i += 16) {
      const answers = await Promise.all(ids.slice(i, i + 16).map((id) => this.http.get(`${this.memories}/${id}`)));
      lost += answers.filter((a) => a.status !== 200).length;
    }
    return lost;
  }

  close(): void {
    this.http.close();
  }
}

function shareList(raw: string): number[] {
  const list = raw.split(',').map((s) => Number(s.trim()));
  if (list.some((n) => !Number.isFinite(n) || n < 0 || n > 1)) {
    throw new Error(`--retain-share ${raw}: must be shares from 0 to 1 separated by commas`);
  }
  return list;
}

function modeList(raw: string): Mode[] {
  const list = raw.split(',').map((s) => s.trim());
  const unknown = list.find((m) => m !== 'engine' && m !== 'floor');
  if (unknown !== undefined) throw new Error(`--mode ${raw}: each mode is engine or floor`);
  return list as Mode[];
}

function memoryIdOf(answer: JsonAnswer | undefined): string {
  const ids = answer?.json.memory_ids;
  const id: unknown = Array.isArray(ids) ? ids[0] : undefined;
  if (typeof id !== 'string') throw new Error(`a retain answered 200 without memory_ids: ${JSON.stringify(answer)}`);
  return id;
}

const f1 = (n: number) => n.toFixed(1);

/** Now on the clock V8's CPU profiles use (CLOCK_MONOTONIC), in microseconds. */
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

const sum = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0);

function printRun(r: LoadRun, mode: Mode): void {
  console.log(
    [
      `${mode.padEnd(6)} ${f1(r.offered_per_s).padStart(7)}/s (${(100 * r.share_of_model).toFixed(0).padStart(3)}%)`,
      ...(RETAIN_SHARES.length > 1 ? [`retain share ${r.retain_share}`] : []),
      `achieved ${f1(r.achieved_per_s).padStart(6)}/s`,
      `recall p50/p95/p99 ${f1(r.recall_ms.p50)}/${f1(r.recall_ms.p95)}/${f1(r.recall_ms.p99)} ms`,
      `retain p50/p95/p99 ${f1(r.retain_ms.p50)}/${f1(r.retain_ms.p95)}/${f1(r.retain_ms.p99)} ms`,
      `errors ${r.errors}, lost ${r.lost ?? '(not stored)'} of ${r.acknowledged_retains}`,
      `CPU/request server ${r.engine_cpu_ms_per_request.toFixed(2)} ms, client ${r.client_cpu_ms_per_request.toFixed(2)} ms`,
    ].join('  '),
  );
  const threads = r.engine_cpu_ms_per_request_by_thread;
  const others = threads.others.map((ms) => ms.toFixed(2)).join(', ');
  console.log(
    `         server CPU ms/request by thread: main ${threads.main.toFixed(2)}; others ${others}; ` +
      `${r.texts_per_model_call.toFixed(2)} texts per model call`,
  );
  if (r.profile_window_us && CPU_PROFILE_DIR !== undefined) {
    const [from, to] = r.profile_window_us;
    console.log(
      `         profiles of this run: node --conditions=source --import tsx packages/engine/bench/cpu-profile.ts ` +
        `--dir ${resolve(CPU_PROFILE_DIR)} --from ${from} --to ${to} --requests ${r.requests}`,
    );
  }
}

/** The model alone on a sample of the mix: its rate in its best batching, and its CPU per text at that batching. */
async function modelOnly(locomo: LocomoText, home: string) {
  const model = benchModelDir();
  const embedder = await createLocalEmbedder({
    model,
    cacheDir: join(home, 'models'),
    dtype: benchModelDtype(),
    log: () => undefined,
  });
  try {
    // A sample of the mix in its proportions: one text per request (a recall's question, a retain's memory).
    const kinds = rng(SEED + 1000);
    let recall = 0;
    let retain = 0;
    const texts = Array.from({ length: MODEL_SAMPLE }, () =>
      kinds() < RETAIN_SHARE ? retainText(locomo, 1_000_000 + retain++) : question(locomo, recall++),
    );
    const best = await bestModelRate(embedder, texts);
    const pass = await embedPass(embedder, texts, batchesByLength(texts, best.cap));
    return { ...best, cpuMsPerText: pass.cpuMs / texts.length };
  } finally {
    await embedder.close();
  }
}

interface ModeResult {
  mode: Mode;
  memories: number;
  fill_seconds: number;
  recall_answer_bytes: number;
  runs: LoadRun[];
  capacity_per_s: number | undefined;
}

/** One server under the procedure: the capacity search, or the rates given with --rates. */
async function measureMode(
  mode: Mode,
  server: EngineProcess,
  locomo: LocomoText,
  modelRate: number,
): Promise<ModeResult> {
  const bench = new LoadBench(server, locomo, mode);
  try {
    const memories = mode === 'engine' ? BANK_SIZE : FLOOR_MEMORIES;
    const fillSeconds = await bench.fill(memories);
    console.log(
      `${mode}: filled ${memories} LoCoMo-derived memories in ${f1(fillSeconds)} s; a recall answers ` +
        `${bench.recallAnswerBytes} bytes of JSON${mode === 'floor' ? ' (the floor answers it from then on)' : ''}`,
    );
    const runs: LoadRun[] = [];
    const measure = async (rate: number, retainShare = RETAIN_SHARE) => {
      const r = await bench.run(rate, modelRate, retainShare);
      runs.push(r);
      printRun(r, mode);
      return r.recall_ms.p95 <= CAPACITY_P95_MS && r.errors === 0;
    };
    const rates = listOption(options, 'rates', []);
    let capacity: number | undefined;
    if (rates.length === 0) {
      const search = await searchCapacity(
        { start: BAR_SHARE * modelRate, step: 0.2 * modelRate, max: 2 * modelRate, rounds: BISECT },
        measure,
      );
      capacity = search.capacity;
      console.log(
        `${mode} capacity (recall p95 <= ${CAPACITY_P95_MS} ms, no errors): ${f1(capacity)} requests/s, ` +
          `${(100 * (capacity / modelRate)).toFixed(0)}% of the model alone (bar >= 80%)`,
      );
    } else {
      for (const rate of rates) for (const share of RETAIN_SHARES) await measure(rate, share);
    }
    return {
      mode,
      memories,
      fill_seconds: fillSeconds,
      recall_answer_bytes: bench.recallAnswerBytes,
      runs,
      capacity_per_s: capacity,
    };
  } finally {
    bench.close();
  }
}

async function main() {
  const home = mkdtempSync(join(tmpdir(), 'mnemos-bench-load-'));
  const env = (mode: Mode) => ({
    MNEMOS_HOME: join(home, mode),
    MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: benchModelDir(),
    MNEMOS_API_PORT: '0',
    MNEMOS_API_HOST: '127.0.0.1',
    ...options.env,
  });
  const loadAverage = loadavg();
  const profiling = CPU_PROFILE_DIR === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${resolve(CPU_PROFILE_DIR)}`];
  const locomo = loadLocomoText();
  try {
    console.log(
      `Open-loop load (${CONNECTIONS} connections, ${SECONDS} s per rate, load average ${f1(loadAverage[0]!)})`,
    );
    const model = await modelOnly(locomo, home);
    console.log(
      `model alone, this mix, best batching: ${f1(model.rate)} requests/s (batches <= ${model.cap} tokens), ` +
        `${model.cpuMsPerText.toFixed(2)} ms of CPU per request`,
    );
    const results: ModeResult[] = [];
    for (const mode of MODES) {
      const server = await spawnEngineProcess(env(mode), mode === 'floor' ? FLOOR_SERVER : undefined, profiling);
      try {
        results.push(await measureMode(mode, server, locomo, model.rate));
      } finally {
        await server.stop();
      }
    }
    const engine = results.find((r) => r.mode === 'engine');
    const floor = results.find((r) => r.mode === 'floor');
    const atBar = engine?.runs.find((r) => Math.abs(r.share_of_model - BAR_SHARE) < 1e-9);
    const capacity = engine?.capacity_per_s;
    const bars = {
      at_40_percent: atBar && {
        recall_p95_le_50: atBar.recall_ms.p95 <= 50,
        recall_p99_le_100: atBar.recall_ms.p99 <= 100,
        no_errors: atBar.errors === 0,
        none_lost: atBar.lost === 0,
      },
      capacity_ge_80_percent: capacity === undefined ? undefined : capacity >= 0.8 * model.rate,
    };
    if (bars.at_40_percent) {
      const verdicts = Object.entries(bars.at_40_percent).map(([bar, met]) => `${bar} ${met ? 'PASS' : 'FAIL'}`);
      console.log(`engine at 40% of the model alone: ${verdicts.join(', ')}`);
    }
    const json = options.values.get('json');
    if (json !== undefined) {
      const out = {
        bench: 'open-loop',
        date: new Date().toISOString(),
        machine: { cores: availableParallelism(), load_average_at_start: loadAverage, node: process.version },
        options: {
          memories: BANK_SIZE,
          seconds: SECONDS,
          connections: CONNECTIONS,
          retain_shares: RETAIN_SHARES,
          modes: MODES,
          env: recordedSettings(options.env),
        },
        fill_seconds: engine?.fill_seconds,
        model_only: {
          requests_per_s: model.rate,
          batch_tokens: model.cap,
          sample: MODEL_SAMPLE,
          cpu_ms_per_request: model.cpuMsPerText,
        },
        runs: engine?.runs ?? [],
        capacity_procedure:
          listOption(options, 'rates', []).length > 0
            ? 'none: the rates given with --rates'
            : `from 40% of the model-only rate up in steps of 20% while recall p95 <= ${CAPACITY_P95_MS} ms with ` +
              `no errors (up to 200%), then ${BISECT} rounds of bisection`,
        capacity_per_s: capacity,
        capacity_share_of_model: capacity === undefined ? undefined : capacity / model.rate,
        recall_answer_bytes: engine?.recall_answer_bytes,
        floor: floor && {
          what: "the engine's HTTP app, model and batcher; recall answers after its query embedding, retain after its texts' (bench/floor-server.ts)",
          memories: floor.memories,
          recall_answer_bytes: floor.recall_answer_bytes,
          runs: floor.runs,
          capacity_per_s: floor.capacity_per_s,
          capacity_share_of_model: floor.capacity_per_s === undefined ? undefined : floor.capacity_per_s / model.rate,
        },
        bars,
      };
      writeFileSync(resolve(json), `${JSON.stringify(out, null, 2)}\n`);
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
