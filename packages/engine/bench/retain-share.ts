import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Embedder } from '../src/embeddings/embedder.js';
import { estimateModelTokens, groupByLength, paddedTokens } from '../src/embeddings/length-groups.js';
import { BATCH_TOKENS } from '../src/embeddings/batcher.js';
import { createLocalEmbedder } from '../src/embeddings/local.js';
import { spawnEngineProcess } from '../src/process.js';
import { JsonClient } from './http-json.js';
import { benchModelDir, benchModelDtype } from './local-model.js';
import { REQUESTS_IN_FLIGHT, retainTurnsInSessions, TURNS_PER_REQUEST } from './locomo-retain.js';
import { batchesByLength, bestModelRate, embedPass, loadLocomoText } from './locomo-text.js';
import { perThreadCpuSeconds } from './process-stats.js';

/**
 * `npm run bench:retain`: where the time of `npm run bench`'s LoCoMo retain run goes, next to the model alone on the
 * same turns. Each round retains the turns into a new bank as `npm run bench` does (requests of 32 turns, two in
 * flight) and then embeds them in this process with the engine's model: in its best batching (sorted over all the
 * turns) and in the length groups one request's turns form on their own. For the engine it prints the CPU time per
 * turn of its main thread, its database thread, its model threads (the model's worker and ONNX Runtime's threads),
 * the bench client's, and the batches the engine formed (from its /metrics). Options: --locomo-turns N (default 640),
 * --rounds N (default 3), --engine-cli <path> (run another checkout's engine, its `packages/engine/src/cli.ts`, to
 * compare two revisions in the same sitting; an engine without the token counters shows no padding figures).
 */

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const LOCOMO_TURNS = Number(args.get('locomo-turns') ?? 640);
const ROUNDS = Number(args.get('rounds') ?? 3);
const ENGINE_CLI = args.get('engine-cli');

interface Batching {
  batches: number;
  texts: number;
  tokens: number;
  padded: number;
}

interface Figures {
  rate: number;
  /** CPU milliseconds per text, by where they were spent. */
  cpu: Record<string, number>;
  batching: Batching;
}

/** The engine's embedding counters from its /metrics text. */
async function batchingCounters(url: string): Promise<Batching> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return {
    batches: value('mnemos_embedding_batch_size_count'),
    texts: value('mnemos_embedding_batch_size_sum'),
    tokens: value('mnemos_embedding_tokens_total'),
    padded: value('mnemos_embedding_padded_tokens_total'),
  };
}

/** What batching `texts` into `batches` (lists of indices) gives the model to run. */
function batchingOf(texts: readonly string[], batches: readonly number[][]): Batching {
  const lengths = texts.map(estimateModelTokens);
  return {
    batches: batches.length,
    texts: texts.length,
    tokens: lengths.reduce((sum, n) => sum + n, 0),
    padded: batches.reduce((sum, batch) => sum + paddedTokens(batch.map((i) => lengths[i]!)), 0),
  };
}

function delta(after: Map<number, number>, before: Map<number, number>): Map<number, number> {
  return new Map([...after].map(([tid, seconds]) => [tid, seconds - (before.get(tid) ?? 0)]));
}

/** The model alone on `texts` in `batches`, in this process: texts per second and CPU milliseconds per text. */
async function modelAlone(model: Embedder, texts: readonly string[], batches: readonly number[][]): Promise<Figures> {
  const { seconds, cpuMs } = await embedPass(model, texts, batches);
  return { rate: texts.length / seconds, cpu: { model: cpuMs / texts.length }, batching: batchingOf(texts, batches) };
}

/** Length groups of each request's turns on their own: what the engine's batcher forms when one request is queued. */
function requestGroups(texts: readonly string[]): number[][] {
  const out: number[][] = [];
  for (let start = 0; start < texts.length; start += TURNS_PER_REQUEST) {
    const request = texts.slice(start, start + TURNS_PER_REQUEST);
    for (const group of groupByLength(request.map(estimateModelTokens), BATCH_TOKENS.document))
      out.push(group.map((i) => start + i));
  }
  return out;
}

function printRow(name: string, f: Figures) {
  const b = f.batching;
  const cpu = Object.entries(f.cpu)
    .map(([where, ms]) => `${where} ${ms.toFixed(2)}`)
    .join(', ');
  const padding = ((100 * (b.padded - b.tokens)) / b.padded).toFixed(0);
  const batching =
    `${b.batches} batches, ${(b.texts / b.batches).toFixed(1)} texts each` +
    (Number.isNaN(b.padded) ? '' : `, ${(b.padded / b.texts).toFixed(1)} padded tokens/text (${padding}% padding)`);
  console.log(`${name.padEnd(34)} ${f.rate.toFixed(1).padStart(7)} texts/s | CPU ms/text: ${cpu} | ${batching}`);
}

async function main() {
  const model = benchModelDir();
  const dtype = benchModelDtype();
  const home = mkdtempSync(join(tmpdir(), 'mnemos-bench-retain-'));
  const engine = await spawnEngineProcess(
    {
      MNEMOS_HOME: home,
      MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: model,
      MNEMOS_API_PORT: '0',
      MNEMOS_API_HOST: '127.0.0.1',
    },
    ENGINE_CLI,
  );
  const pid = engine.child.pid ?? 0;
  const http = new JsonClient(64);
  const post = (url: string, body: unknown) => http.post(url, body);
  const alone = await createLocalEmbedder({ model, cacheDir: join(home, 'models'), dtype, log: () => undefined });
  const base = `${engine.url}/v1/default/banks`;
  const locomo = loadLocomoText();
  const turns = locomo.turns.slice(100, 100 + LOCOMO_TURNS);
  console.log(
    `Retain on LoCoMo turns against the model alone (${turns.length} turns, requests of ${TURNS_PER_REQUEST}, ` +
      `${REQUESTS_IN_FLIGHT} in flight, local ${model.split('/').pop()} ${dtype})\n`,
  );
  try {
    // Warm up: the engine on other turns (every batch shape ONNX Runtime will see), the model alone on these.
    await retainTurnsInSessions(
      post,
      `${base}/warm/memories`,
      locomo.turns.slice(100 + LOCOMO_TURNS, 100 + LOCOMO_TURNS + 128),
    );
    const best = await bestModelRate(alone, turns);
    const bestBatches = batchesByLength(turns, best.cap);
    // The database thread: the busiest thread other than the main one while only the database works (list calls).
    const before = perThreadCpuSeconds(pid);
    for (let i = 0; i < 200; i++) await http.get(`${base}/warm/memories?limit=1`);
    const listing = [...delta(perThreadCpuSeconds(pid), before)].filter(([tid]) => tid !== pid);
    const dbThread = listing.sort((a, b) => b[1] - a[1])[0]![0];
    const rounds: Array<Record<string, Figures>> = [];
    for (let round = 0; round < ROUNDS; round++) {
      const threadsBefore = perThreadCpuSeconds(pid);
      const countersBefore = await batchingCounters(engine.url);
      const client = process.cpuUsage();
      const rate = await retainTurnsInSessions(post, `${base}/locomo-${round}/memories`, turns);
      const clientUsed = process.cpuUsage(client);
      const countersAfter = await batchingCounters(engine.url);
      const used = delta(perThreadCpuSeconds(pid), threadsBefore);
      const perText = (seconds: number) => (1000 * seconds) / turns.length;
      let model = 0;
      let other = 0;
      // Threads started after the database thread are the model's: its worker and ONNX Runtime's pool.
      for (const [tid, seconds] of used) {
        if (tid === pid || tid === dbThread) continue;
        if (tid > dbThread) model += seconds;
        else other += seconds;
      }
      const engineFigures: Figures = {
        rate,
        cpu: {
          main: perText(used.get(pid) ?? 0),
          database: perText(used.get(dbThread) ?? 0),
          model: perText(model),
          other: perText(other),
          client: (clientUsed.user + clientUsed.system) / 1000 / turns.length,
        },
        batching: {
          batches: countersAfter.batches - countersBefore.batches,
          texts: countersAfter.texts - countersBefore.texts,
          tokens: countersAfter.tokens - countersBefore.tokens,
          padded: countersAfter.padded - countersBefore.padded,
        },
      };
      const figures: Record<string, Figures> = {
        engine: engineFigures,
        [`model alone, best (<= ${best.cap} tok)`]: await modelAlone(alone, turns, bestBatches),
        'model alone, per-request groups': await modelAlone(alone, turns, requestGroups(turns)),
      };
      rounds.push(figures);
      console.log(`round ${round + 1}`);
      for (const [name, f] of Object.entries(figures)) printRow(name, f);
      const ratio = engineFigures.rate / figures[`model alone, best (<= ${best.cap} tok)`]!.rate;
      // When the model alone keeps the cores busy, the rate follows CPU per text: this ratio needs no quiet machine.
      const engineCpu = Object.values(engineFigures.cpu).reduce((sum, ms) => sum + ms, 0);
      const cpuRatio = figures[`model alone, best (<= ${best.cap} tok)`]!.cpu.model! / engineCpu;
      console.log(
        `engine / model alone, best: ${(100 * ratio).toFixed(0)}% by rate, ${(100 * cpuRatio).toFixed(0)}% by CPU\n`,
      );
    }
    const ratios = rounds.map((r) => {
      const [engineRun, bestRun] = Object.values(r);
      return engineRun!.rate / bestRun!.rate;
    });
    console.log(`engine / model alone per round: ${ratios.map((x) => `${(100 * x).toFixed(0)}%`).join(', ')}`);
  } finally {
    http.close();
    await alone.close();
    await engine.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

await main();
