import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BATCH_TOKENS } from '../src/embeddings/batcher.js';
import type { Embedder } from '../src/embeddings/embedder.js';
import { createLocalEmbedder } from '../src/embeddings/local.js';
import { benchModelDir } from './local-model.js';
import { batchesByLength, batchesInOrder, embedPass, loadLocomoText } from './locomo-text.js';
import { memoryText, queryText, rng } from './synthetic.js';

/**
 * `npm run bench:model`: what the local model costs per text, by batch size, for the mixed load's two kinds of text
 * (its recall queries and its retained memories), in both precisions the engine offers. The model is loaded as the
 * engine loads it (local.ts, same session options), in this process while nothing else runs, so the process's CPU
 * time is the model's. The mixed load's CPU budget (docs/benchmarks.md) starts from these figures. Then real text:
 * LoCoMo turns in batches of 32 as they come, and in the length groups the engine's batcher forms (batch column
 * `<=N tok`: at most N padded tokens per batch).
 */

const model = benchModelDir();
const BATCH_SIZES = [1, 2, 4, 8, 16, 32];
/** Texts embedded per measurement: enough for a stable mean at batch 32. */
const TEXTS = 256;
/** LoCoMo turns embedded per measurement. */
const TURNS = 512;

/** Wall and CPU milliseconds per text of one pass over `texts` in `batches` (lists of indices). */
async function cost(embedder: Embedder, texts: readonly string[], batches: readonly number[][]) {
  const { seconds, cpuMs } = await embedPass(embedder, texts, batches);
  return { wall: (1000 * seconds) / texts.length, cpu: cpuMs / texts.length };
}

async function main() {
  const cacheDir = mkdtempSync(join(tmpdir(), 'mnemos-bench-model-'));
  console.log(`Local model cost per text (${model.split('/').pop()}, ${process.arch}, node ${process.version})\n`);
  console.log(
    `${'precision'.padEnd(10)} ${'texts'.padEnd(9)} ${'batch'.padStart(5)} ${'wall ms/text'.padStart(13)} ${'CPU ms/text'.padStart(12)}`,
  );
  try {
    const turns = loadLocomoText().turns.slice(0, TURNS);
    for (const dtype of ['fp32', 'q8'] as const) {
      const embedder = await createLocalEmbedder({ model, cacheDir, dtype, log: () => undefined });
      const r = rng(1);
      for (const kind of ['queries', 'memories'] as const) {
        const texts = Array.from({ length: TEXTS }, (_, i) => (kind === 'queries' ? queryText(r) : memoryText(r, i)));
        for (const size of BATCH_SIZES) {
          // One warm-up pass at this batch size (ONNX Runtime sizes its buffers for each new shape).
          await embedder.embed(texts.slice(0, size), 'document');
          const cpu = process.cpuUsage();
          const started = performance.now();
          for (let i = 0; i < TEXTS; i += size)
            await embedder.embed(texts.slice(i, i + size), kind === 'queries' ? 'query' : 'document');
          const wall = (performance.now() - started) / TEXTS;
          const used = process.cpuUsage(cpu);
          const cpuPerText = (used.user + used.system) / 1000 / TEXTS;
          console.log(
            `${dtype.padEnd(10)} ${kind.padEnd(9)} ${String(size).padStart(5)} ${wall.toFixed(2).padStart(13)} ${cpuPerText.toFixed(2).padStart(12)}`,
          );
        }
      }
      const ways: Array<[string, number[][]]> = [
        ['32', batchesInOrder(turns.length, 32)],
        [`<=${BATCH_TOKENS.document} tok`, batchesByLength(turns, BATCH_TOKENS.document)],
      ];
      for (const [name, batches] of ways) {
        await embedder.embed(
          batches[0]!.map((i) => turns[i]!),
          'document',
        );
        const { wall, cpu } = await cost(embedder, turns, batches);
        const figures = `${wall.toFixed(2).padStart(13)} ${cpu.toFixed(2).padStart(12)}`;
        console.log(`${dtype.padEnd(10)} ${'turns'.padEnd(9)} ${name.padStart(5)} ${figures}`);
      }
      await embedder.close();
    }
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
  }
}

await main();
