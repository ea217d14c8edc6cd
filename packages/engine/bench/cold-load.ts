import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadEngineConfig } from '../src/config/load.js';
import { normalize } from '../src/embeddings/embedder.js';
import { Engine } from '../src/engine.js';
import { DEFAULT_SPACE, type NewMemory } from '../src/memory/types.js';
import { VectorCache } from '../src/vectors/vector-cache.js';
import { derivedMemory, loadLocomoText } from './locomo-text.js';
import { numberOption, parseBenchOptions } from './options.js';
import { rng } from './synthetic.js';
import { testModelDir } from './test-assets.js';

/**
 * `npm run bench:cold-load`: how long a bank's in-memory copy (vectors/vector-cache.ts) takes to load from the
 * embedded database, in CPU seconds of the whole process (the database's thread included) and in wall seconds.
 *
 * The bank holds LoCoMo-derived texts (locomo-text.ts) with random unit vectors, written through the store's insert
 * (binary vectors, the keyword index as retain builds it). `--home DIR` keeps the database between runs: a later run
 * adds only what is missing, so two checkouts can be compared on one database, alternating. Each load prints a
 * fingerprint of the copy (its size, the sum of its cosines with a fixed vector, its terms' document frequencies),
 * which must be the same for every checkout that loads the same rows.
 */

const USAGE =
  'options: --memories N (50000) --loads N (3) --home DIR (kept; a temporary folder when absent) --env KEY=VALUE';
const options = parseBenchOptions(process.argv.slice(2), ['memories', 'loads', 'home'], USAGE);
const MEMORIES = numberOption(options, 'memories', 50_000);
const LOADS = numberOption(options, 'loads', 3);
const BANK = 'cold-load';
const FILL_BATCH = 1000;

async function fill(engine: Engine, total: number): Promise<void> {
  const { db, store, embedder } = engine;
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM memories WHERE tenant = 'default' AND bank_id = $1`,
    [BANK],
  );
  const turns = loadLocomoText().turns;
  // A fixed seed: every fill of the same size holds the same vectors.
  const next = rng(7);
  for (let k0 = row?.n ?? 0; k0 < total; k0 += FILL_BATCH) {
    const batchId = randomUUID();
    const items = Array.from(
      { length: Math.min(FILL_BATCH, total - k0) },
      (
        _,
        i,
      ): NewMemory & {
        embedding: Float32Array;
      } => {
        const k = k0 + i;
        const text = derivedMemory(turns, k);
        return {
          id: randomUUID(),
          type: 'raw',
          text,
          context: k % 5 === 0 ? 'a context line' : null,
          metadata: k % 7 === 0 ? { source: 'bench' } : {},
          tags: k % 3 === 0 ? ['tagged'] : [],
          entities: [],
          documentId: null,
          sourceId: null,
          batchId,
          seq: i,
          contentHash: `cold-load-${k}`,
          tokenCount: Math.ceil(text.length / 4),
          occurredAt: k % 2 === 0 ? new Date(Date.UTC(2024, 0, 1) + k * 60_000) : null,
          expiresAt: null,
          embedding: normalize(Float32Array.from({ length: embedder.dimension }, () => next() - 0.5)),
        };
      },
    );
    await db.transaction((tx) => store.insert(tx, { tenant: 'default', bankId: BANK, space: DEFAULT_SPACE }, items));
    process.stdout.write(`\r  filled ${k0 + items.length} of ${total}`);
  }
  process.stdout.write('\n');
}

/** What the copy holds, summed: equal for two loads of the same rows, and different when a vector or term is not. */
function fingerprint(engine: Engine, bank: Awaited<ReturnType<VectorCache['banks']>>[number]) {
  const probe = normalize(Float32Array.from({ length: engine.embedder.dimension }, (_, i) => Math.sin(i + 1)));
  let cosines = 0;
  let lengths = 0;
  let tokens = 0;
  for (const id of bank.ids()) {
    cosines += bank.cosine(id, probe);
    lengths += bank.get(id)!.length;
    tokens += bank.get(id)!.tokenCount;
  }
  const frequencies = ['dog', 'paint', 'friend', 'work', 'love'].map((t) => bank.documentFrequency(t)).join('/');
  return `${bank.size} rows, cosine sum ${cosines.toFixed(4)}, lengths ${lengths}, tokens ${tokens}, df ${frequencies}`;
}

async function main(): Promise<void> {
  const kept = options.values.get('home');
  const home = kept === undefined ? mkdtempSync(join(tmpdir(), 'mnemos-bench-cold-load-')) : resolve(kept);
  const env = {
    ...process.env,
    MNEMOS_HOME: home,
    MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: testModelDir(),
    MNEMOS_API_LOG_LEVEL: 'warn',
    ...options.env,
  };
  const quiet = { info: () => undefined, warn: (m: string) => console.warn(m), error: (m: string) => console.error(m) };
  const engine = await Engine.open(loadEngineConfig(env), quiet);
  try {
    await fill(engine, MEMORIES);
    for (let i = 0; i < LOADS; i++) {
      const cache = new VectorCache(engine.store, engine.embedder.dimension, Number.MAX_SAFE_INTEGER);
      const cpu = process.cpuUsage();
      const started = performance.now();
      const [bank] = await cache.banks(engine.db, 'default', [BANK]);
      const wall = (performance.now() - started) / 1000;
      const used = process.cpuUsage(cpu);
      const cpuSeconds = (used.user + used.system) / 1e6;
      console.log(
        `load ${i + 1}: ${bank!.size} memories, CPU ${cpuSeconds.toFixed(2)} s ` +
          `(${((cpuSeconds * 1e6) / bank!.size).toFixed(0)} us a memory), wall ${wall.toFixed(2)} s; ` +
          fingerprint(engine, bank!),
      );
    }
  } finally {
    await engine.close();
    if (kept === undefined) rmSync(home, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
