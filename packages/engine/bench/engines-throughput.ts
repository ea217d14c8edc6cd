import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnEngineProcess, type EngineProcess } from '../src/process.js';
import { errorMessage } from '../src/util/error-message.js';
import type { DatabaseCpu } from './database-cpu.js';
import { recallTiers } from './engine-metrics.js';
import { JsonClient } from './http-json.js';
import { summarise, type LatencySummary } from './open-loop.js';
import { cpuTicks, machineTicks, TICKS_PER_SECOND } from './process-stats.js';

/**
 * Recall throughput of engines sharing one database (`bench:scale --throughput-engines 1,2`): closed-loop recalls,
 * each engine with the same number in flight, first from the engine the bench measured, then from more engine
 * processes started on the same database, for the same time each. What decides whether a second engine adds
 * throughput is where the CPU goes, so each phase reads it from /proc: every engine process's, the database server's
 * (when it runs on this machine), the bench's own (the HTTP client shares the cores) and the whole machine's.
 */

export interface ThroughputPlan {
  /** Engines in each phase, ascending; the first engine is the bench's, each further one is started for the phases. */
  engines: readonly number[];
  inFlight: number;
  seconds: number;
}

/** An engine started for a phase, before it: its start, and the wait for its copy of the banks (--settle). */
export interface AddedEngine {
  startup_ms: number;
  settled_seconds: number;
  /** Whether its cache held the banks' memories when the phase began (false: the --settle wait ran out). */
  loaded: boolean;
}

export interface ThroughputPhase {
  engines: number;
  in_flight_per_engine: number;
  seconds: number;
  recalls: number;
  errors: number;
  first_error: string | undefined;
  recalls_per_second: number;
  /** recalls_per_second against the first phase's. */
  ratio_to_first: number;
  recall_ms: LatencySummary;
  /** The phase's recalls by tier, all engines (the engines' `mnemos_recall_tier_total`): both phases on the same one? */
  tiers: Record<string, number>;
  /** The recalls each engine answered, and its process's CPU (all its threads) per recall it answered. */
  engine_recalls: number[];
  engine_cpu_ms_per_recall: number[];
  /** The database server's processes for this database, per recall of all engines (undefined: not on this machine). */
  database_cpu_ms_per_recall: number | undefined;
  bench_cpu_ms_per_recall: number;
  /** The whole machine's busy CPU over the phase, in cores, whoever used it (/proc/stat). */
  machine_busy_cores: number;
  cores: number;
  load_average_at_end: number[];
  added: AddedEngine[];
}

export interface ThroughputSetup {
  first: EngineProcess;
  /** The first engine's settings; a further engine gets the same with a home folder of its own. */
  env: Readonly<Record<string, string>>;
  /** Brings a started engine's copy of the banks in as the bench's measurement does (first recalls, --settle). */
  load: (url: string) => Promise<{ seconds: number; loaded: boolean }>;
  /** The k-th recall of the phases (counted across them, so no question repeats before the list runs out). */
  request: (k: number) => { bank: string; query: string };
  databaseCpu: DatabaseCpu | undefined;
}

type PhaseFigures = Omit<ThroughputPhase, 'ratio_to_first' | 'added'>;

/** Every engine's recalls by tier so far, added up. */
async function tiersOf(engines: readonly EngineProcess[]): Promise<Map<string, number>> {
  const sum = new Map<string, number>();
  for (const engine of engines) {
    const tiers = recallTiers(await fetch(`${engine.url}/metrics`).then((r) => r.text()));
    for (const [tier, n] of Object.entries(tiers)) sum.set(tier, (sum.get(tier) ?? 0) + n);
  }
  return sum;
}

async function runPhase(
  engines: readonly EngineProcess[],
  setup: ThroughputSetup,
  plan: ThroughputPlan,
  next: { k: number },
): Promise<PhaseFigures> {
  const http = new JsonClient(plan.inFlight);
  const latencies: number[] = [];
  const answered = engines.map(() => 0);
  const failures = { count: 0, first: undefined as string | undefined };
  const pids = engines.map((e) => e.child.pid ?? 0);
  const tiersBefore = await tiersOf(engines);
  const enginesBefore = pids.map((pid) => cpuTicks(pid) ?? 0);
  const databaseBefore = await setup.databaseCpu?.read();
  const benchBefore = process.cpuUsage();
  const machineBefore = machineTicks();
  const started = performance.now();
  const deadline = started + plan.seconds * 1000;
  const recallLoop = async (engine: EngineProcess, e: number) => {
    while (performance.now() < deadline) {
      const { bank, query } = setup.request(next.k++);
      const sent = performance.now();
      const failure = await http.post(`${engine.url}/v1/default/banks/${bank}/memories/recall`, { query }).then(
        (a) => (a.status === 200 ? undefined : `recall answered ${a.status}: ${JSON.stringify(a.json)}`),
        (error: unknown) => errorMessage(error),
      );
      if (failure !== undefined) {
        failures.count++;
        failures.first ??= failure;
      } else {
        latencies.push(performance.now() - sent);
        answered[e]!++;
      }
    }
  };
  try {
    await Promise.all(
      engines.flatMap((engine, e) => Array.from({ length: plan.inFlight }, () => recallLoop(engine, e))),
    );
  } finally {
    http.close();
  }
  const elapsed = (performance.now() - started) / 1000;
  const recalls = latencies.length;
  const perRecall = (seconds: number, n = recalls) => (seconds * 1000) / Math.max(1, n);
  const database = databaseBefore && (await setup.databaseCpu?.since(databaseBefore));
  const bench = process.cpuUsage(benchBefore);
  const machine = machineTicks();
  const tiersAfter = await tiersOf(engines);
  const busyShare = 1 - (machine.idle - machineBefore.idle) / Math.max(1, machine.total - machineBefore.total);
  return {
    engines: engines.length,
    in_flight_per_engine: plan.inFlight,
    seconds: elapsed,
    recalls,
    errors: failures.count,
    first_error: failures.first,
    recalls_per_second: recalls / elapsed,
    recall_ms: summarise(latencies),
    tiers: Object.fromEntries(
      [...tiersAfter].flatMap(([tier, n]) => {
        const during = n - (tiersBefore.get(tier) ?? 0);
        return during > 0 ? [[tier, during] as const] : [];
      }),
    ),
    engine_recalls: answered,
    engine_cpu_ms_per_recall: pids.map((pid, e) =>
      perRecall(((cpuTicks(pid) ?? enginesBefore[e]!) - enginesBefore[e]!) / TICKS_PER_SECOND, answered[e]),
    ),
    database_cpu_ms_per_recall: database ? perRecall(database.seconds) : undefined,
    bench_cpu_ms_per_recall: perRecall((bench.user + bench.system) / 1e6),
    machine_busy_cores: busyShare * availableParallelism(),
    cores: availableParallelism(),
    load_average_at_end: loadavg(),
  };
}

/** Runs the plan's phases, starting engines as they are needed; stops the engines it started (not the first). */
export async function measureThroughput(setup: ThroughputSetup, plan: ThroughputPlan): Promise<ThroughputPhase[]> {
  const engines = [setup.first];
  const homes: string[] = [];
  const phases: ThroughputPhase[] = [];
  const next = { k: 0 };
  try {
    for (const count of plan.engines) {
      const added: AddedEngine[] = [];
      while (engines.length < count) {
        const home = mkdtempSync(join(tmpdir(), 'mnemos-bench-engine-'));
        homes.push(home);
        const starting = performance.now();
        engines.push(await spawnEngineProcess({ ...setup.env, MNEMOS_HOME: home }));
        const startup = performance.now() - starting;
        const { seconds, loaded } = await setup.load(engines.at(-1)!.url);
        added.push({ startup_ms: startup, settled_seconds: seconds, loaded });
      }
      const figures = await runPhase(engines, setup, plan, next);
      const first = phases[0]?.recalls_per_second ?? figures.recalls_per_second;
      phases.push({ ...figures, ratio_to_first: figures.recalls_per_second / first, added });
    }
  } finally {
    await Promise.all(engines.slice(1).map((e) => e.stop()));
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  }
  return phases;
}

/** A share of the cores this busy or more counts as all of them. */
const SATURATED = 0.9;

/**
 * Each phase in two lines: its figures, then the reading: the CPU a recall (engines, database, bench) times the rate
 * is the cores the recalls keep busy; against the machine's cores and how busy the machine was, it says whether the
 * cores, not the database, set the ceiling.
 */
export function throughputLines(phases: readonly ThroughputPhase[]): string[] {
  return phases.flatMap((p) => {
    const engineCpu =
      p.engine_cpu_ms_per_recall.reduce((sum, ms, e) => sum + ms * p.engine_recalls[e]!, 0) / Math.max(1, p.recalls);
    const database = p.database_cpu_ms_per_recall;
    const total = engineCpu + (database ?? 0) + p.bench_cpu_ms_per_recall;
    const used = (total * p.recalls_per_second) / 1000;
    const started = p.added.map(
      (a) =>
        `; one more engine started in ${(a.startup_ms / 1000).toFixed(1)} s, ` +
        `its copy ${a.loaded ? 'loaded' : 'NOT loaded'} after ${a.settled_seconds.toFixed(0)} s`,
    );
    const verdict =
      p.machine_busy_cores >= SATURATED * p.cores
        ? "the machine's cores are all busy, so they set this ceiling, not the database"
        : 'cores to spare, so the ceiling is elsewhere (waits in the database, or too few recalls in flight)';
    return [
      `      ${p.engines} engine(s), ${p.in_flight_per_engine} recalls in flight each, ${p.seconds.toFixed(0)} s` +
        `${started.join('')}: ${p.recalls_per_second.toFixed(1)} recalls/s (${p.ratio_to_first.toFixed(2)}x the first ` +
        `phase's), p50 / p95 ${p.recall_ms.p50.toFixed(1)} / ${p.recall_ms.p95.toFixed(1)} ms, ${p.errors} errors` +
        (p.first_error === undefined ? '' : ` (the first: ${p.first_error})`) +
        `, tiers ${JSON.stringify(p.tiers)}`,
      `        CPU a recall: engines ${engineCpu.toFixed(1)} ms ` +
        `(each ${p.engine_cpu_ms_per_recall.map((ms) => ms.toFixed(1)).join(', ')}), ` +
        `database ${database === undefined ? 'not read (its server is not on this machine)' : `${database.toFixed(1)} ms`}, ` +
        `bench ${p.bench_cpu_ms_per_recall.toFixed(1)} ms`,
      `        reading: ${total.toFixed(1)} ms of CPU a recall x ${p.recalls_per_second.toFixed(1)}/s = ` +
        `${used.toFixed(2)} cores of ${p.cores}; the machine had ${p.machine_busy_cores.toFixed(2)} busy ` +
        `(${Math.max(0, p.machine_busy_cores - used).toFixed(2)} by other work), load average ` +
        `${p.load_average_at_end[0]!.toFixed(1)}: ${verdict}`,
    ];
  });
}
