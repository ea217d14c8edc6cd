import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BATCH_HOLD_MS, BATCH_TOKENS, MicroBatcher, type BatchHold } from '../src/embeddings/batcher.js';
import type { Embedder } from '../src/embeddings/embedder.js';
import { estimateModelTokens } from '../src/embeddings/length-groups.js';
import { createThreadedLocalEmbedder } from '../src/embeddings/threaded.js';
import { benchModelDir, benchModelDtype } from './local-model.js';
import { derivedMemory, loadLocomoText } from './locomo-text.js';
import { mixedArrivals, runOpenLoop, summarise } from './open-loop.js';
import { listOption, numberOption, parseBenchOptions } from './options.js';
import { rng } from './synthetic.js';

/**
 * `node --conditions=source --import tsx packages/engine/bench/batch-hold.ts`: what the batcher's hold does to the
 * model's work, with nothing but the model and the batcher. The engine's model (its own thread, two batches in flight)
 * embeds the open-loop mix's texts (80% LoCoMo questions as queries, 20% LoCoMo-derived memories as documents) as they
 * arrive on a Poisson schedule, once with no hold and once with the engine's, alternately. The process's CPU is the
 * model's (the main thread only schedules), so CPU per text compares the two fairly on a shared machine; the wait per
 * text (from its arrival to its vector) is printed too, and means little there.
 *
 * Options: --rates R1,R2 (texts/s, 40,80,120) --seconds S (15) --pairs N (2) --hold MS (the engine's hold).
 */

const USAGE = 'options: --rates R1,R2 --seconds S --pairs N --hold MS';
const options = parseBenchOptions(process.argv.slice(2), ['rates', 'seconds', 'pairs', 'hold'], USAGE);
const RATES = listOption(options, 'rates', [40, 80, 120]);
const SECONDS = numberOption(options, 'seconds', 15);
const PAIRS = numberOption(options, 'pairs', 2);
const HOLD_MS = numberOption(options, 'hold', BATCH_HOLD_MS);

const timer: BatchHold['schedule'] = (run, ms) => {
  const t = setTimeout(run, ms);
  return () => clearTimeout(t);
};

async function run(model: Embedder, rate: number, holdMs: number, seed: number) {
  const locomo = loadLocomoText();
  let calls = 0;
  let texts = 0;
  const batcher = new MicroBatcher(
    model,
    BATCH_TOKENS,
    (size) => {
      calls++;
      texts += size;
    },
    2,
    estimateModelTokens,
    { ms: holdMs, schedule: timer },
  );
  let question = 0;
  let memory = 0;
  const arrivals = mixedArrivals(rate, SECONDS, 0.2, rng(seed), rng(seed + 1));
  const cpu = process.cpuUsage();
  const done = await runOpenLoop(arrivals, Number.MAX_SAFE_INTEGER, (op) =>
    op === 'recall'
      ? batcher.embed([locomo.questions[question++ % locomo.questions.length]!], 'query')
      : batcher.embed([derivedMemory(locomo.turns, memory++)], 'document'),
  );
  const used = process.cpuUsage(cpu);
  return {
    cpuPerText: (used.user + used.system) / 1000 / done.length,
    perCall: texts / Math.max(1, calls),
    wait: summarise(done.filter((c) => c.op === 'recall').map((c) => c.latency)),
  };
}

async function main(): Promise<void> {
  const cacheDir = mkdtempSync(join(tmpdir(), 'mnemos-bench-hold-'));
  const model = await createThreadedLocalEmbedder({
    model: benchModelDir(),
    cacheDir,
    dtype: benchModelDtype(),
    log: () => undefined,
  });
  try {
    console.log(`The batcher's hold: none against ${HOLD_MS} ms, ${SECONDS} s per run, the open-loop mix's texts`);
    for (const rate of RATES) {
      for (let pair = 0; pair < PAIRS; pair++) {
        for (const hold of [0, HOLD_MS]) {
          const r = await run(model, rate, hold, 10 * pair + 1);
          console.log(
            `${String(rate).padStart(4)}/s hold ${String(hold).padStart(2)} ms: CPU ${r.cpuPerText.toFixed(2)} ms/text, ` +
              `${r.perCall.toFixed(2)} texts per call, query wait p50/p95 ${r.wait.p50.toFixed(1)}/` +
              `${r.wait.p95.toFixed(1)} ms`,
          );
        }
      }
    }
  } finally {
    await model.close();
    rmSync(cacheDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
