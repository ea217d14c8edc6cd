import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnEngineProcess } from '../src/process.js';
import { checkoutRevision, repositoryRoot, workingTree, type Checkout } from './ab-checkout.js';
import { embeddingBatches, textsPerCall } from './engine-metrics.js';
import { JsonClient } from './http-json.js';
import { benchModelDir } from './local-model.js';
import { derivedMemory, loadLocomoText } from './locomo-text.js';
import { mixedArrivals, runOpenLoop } from './open-loop.js';
import { numberOption, parseBenchOptions } from './options.js';
import { cpuPerRequestByThread, perThreadCpuSeconds } from './process-stats.js';
import { rng } from './synthetic.js';

/**
 * `node --conditions=source --import tsx packages/engine/bench/cpu-ab.ts --base <ref>`: the engine's CPU per request
 * of the open-loop mix (bench:load's: 80% recalls of LoCoMo questions, 20% single retains of new LoCoMo-derived
 * memories, Poisson arrivals at one fixed rate, 32 connections) for two revisions, in alternating runs in one sitting.
 * The base fills a bank once; every run starts its revision's engine on a fresh copy of that data folder, warms it
 * with 40 recalls, runs the same schedule and reads each engine thread's CPU from /proc. CPU per request is what a
 * shared machine measures fairly; latency there is not reported.
 *
 * Options: --base REF (required) --head REF (default: the working tree) --rate R (100 requests/s) --seconds S (20)
 * --pairs N (3) --memories N (10000) --retain-share F (0.2; 0 runs recalls only, 1 retains only, to tell the two
 * operations' CPU apart). Each run also prints the texts per model call, from the engine's /metrics.
 */

const USAGE = 'options: --base REF --head REF --rate R --seconds S --pairs N --memories N --retain-share F';
const options = parseBenchOptions(
  process.argv.slice(2),
  ['base', 'head', 'rate', 'seconds', 'pairs', 'memories', 'retain-share'],
  USAGE,
);
const RETAIN_SHARE = numberOption(options, 'retain-share', 0.2, 0);
if (RETAIN_SHARE > 1) throw new Error(`--retain-share ${RETAIN_SHARE}: a share is between 0 and 1`);
const RATE = numberOption(options, 'rate', 100);
const SECONDS = numberOption(options, 'seconds', 20);
const PAIRS = numberOption(options, 'pairs', 3);
const MEMORIES = numberOption(options, 'memories', 10_000);
const BANK = 'load';
const locomo = loadLocomoText();

const engineEnv = (home: string) => ({
  MNEMOS_HOME: home,
  MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: benchModelDir(),
  MNEMOS_API_PORT: '0',
  MNEMOS_API_HOST: '127.0.0.1',
});

/** Fills a bank with the base revision's engine; its data folder is what every run starts from. */
async function fill(base: Checkout, home: string, http: JsonClient): Promise<void> {
  const engine = await spawnEngineProcess(engineEnv(home), base.cli);
  try {
    for (let n = 0; n < MEMORIES; n += 100) {
      const items = Array.from({ length: Math.min(100, MEMORIES - n) }, (_, i) => ({
        content: derivedMemory(locomo.turns, n + i),
      }));
      const answer = await http.post(`${engine.url}/v1/default/banks/${BANK}/memories`, { items });
      if (answer.status !== 200) throw new Error(`the fill failed: ${JSON.stringify(answer.json)}`);
    }
  } finally {
    await engine.stop();
  }
}

async function run(side: Checkout, filled: string, http: JsonClient) {
  const home = mkdtempSync(join(tmpdir(), 'mnemos-cpu-ab-run-'));
  cpSync(filled, home, { recursive: true });
  const engine = await spawnEngineProcess(engineEnv(home), side.cli);
  try {
    const memories = `${engine.url}/v1/default/banks/${BANK}/memories`;
    const question = (k: number) => locomo.questions[k % locomo.questions.length]!;
    for (let i = 0; i < 40; i++) await http.post(`${memories}/recall`, { query: question(i) });
    let recalls = 0;
    let retains = 0;
    const arrivals = mixedArrivals(RATE, SECONDS, RETAIN_SHARE, rng(3), rng(4));
    const pid = engine.child.pid;
    const batchesBefore = await embeddingBatches(engine.url);
    const before = perThreadCpuSeconds(pid);
    const done = await runOpenLoop(arrivals, 32, (op) =>
      op === 'recall'
        ? http.post(`${memories}/recall`, { query: question(recalls++) })
        : http.post(memories, { content: derivedMemory(locomo.turns, MEMORIES + retains++) }),
    );
    const byThread = cpuPerRequestByThread(pid, before, perThreadCpuSeconds(pid), done.length);
    const perCall = textsPerCall(batchesBefore, await embeddingBatches(engine.url));
    const errors = done.filter((c) => c.error !== undefined || c.result?.status !== 200).length;
    const total = byThread.main + byThread.others.reduce((a, b) => a + b, 0);
    return { total, byThread, errors, perCall };
  } finally {
    await engine.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const baseRef = options.values.get('base');
  if (baseRef === undefined) throw new Error(`--base is missing; ${USAGE}`);
  const root = repositoryRoot();
  const base = checkoutRevision(root, baseRef);
  const headRef = options.values.get('head');
  const checkouts = [base];
  const http = new JsonClient(32);
  const filled = mkdtempSync(join(tmpdir(), 'mnemos-cpu-ab-'));
  try {
    const head = headRef === undefined ? workingTree(root) : checkoutRevision(root, headRef);
    checkouts.push(head);
    await fill(base, filled, http);
    console.log(
      `CPU per request at ${RATE}/s for ${SECONDS} s (retain share ${RETAIN_SHARE}), ${MEMORIES} memories: ` +
        `base ${base.commit}, head ${head.commit}`,
    );
    for (let pair = 0; pair < PAIRS; pair++) {
      for (const [name, side] of [
        ['base', base],
        ['head', head],
      ] as const) {
        const r = await run(side, filled, http);
        const others = r.byThread.others.map((ms) => ms.toFixed(2)).join(', ');
        console.log(
          `${name} ${r.total.toFixed(2)} ms (main ${r.byThread.main.toFixed(2)}; others ${others}), ` +
            `${r.perCall.toFixed(2)} texts per model call, errors ${r.errors}`,
        );
      }
    }
  } finally {
    http.close();
    rmSync(filled, { recursive: true, force: true });
    for (const c of checkouts) c.remove();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
