import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { BATCH_TOKENS } from '../src/embeddings/batcher.js';
import { createLocalEmbedder } from '../src/embeddings/local.js';
import { TopK } from '../src/vectors/kernels/bank-vectors.js';
import { candidateDepth, refinedDepth } from '../src/recall/compact-arms.js';
import { BinaryCodes, nearestRows } from '../src/vectors/kernels/binary-codes.js';
import { Int16Matrix } from '../src/vectors/kernels/int16-matrix.js';
import { ResidualBits, ResidualLevels, THRESHOLD_SIGMAS } from '../src/vectors/kernels/residual-bits.js';
import { benchModelDir, benchModelDtype } from './local-model.js';
import { batchesByLength, derivedVector, loadLocomoText } from './locomo-text.js';
import { summarise, type LatencySummary } from './open-loop.js';
import { listOption, numberOption, parseBenchOptions } from './options.js';

/**
 * `npm run bench:binary-recall`: how many Hamming candidates a binary-code scan must pass on so
 * that they hold the exact top k by cosine. The banks are made as bench/scale.ts makes them: LoCoMo turns embedded by
 * the model, then derived memories whose vectors mix two turn vectors (derivedVector); the queries are LoCoMo
 * questions embedded as queries. For each bank size, k and R: the mean fraction of the exact top k (the engine's
 * int16 scan, whose rankings are the float ones) found among the R rows nearest by Hamming distance, with the bits
 * taken against zero and against the mean of the bank's first 10,000 vectors. Also the time of one scan of the codes
 * and of picking the nearest rows from its distances. And the compact tier's semantic candidates (recall/compact-arms.ts,
 * two-bit levels learnt from the bank's first 2,000 vectors as the engine learns them): the fraction of the exact top k
 * among the candidateDepth(k) nearest sign codes, and among the refinedDepth(k) of those its two-bit codes keep, which
 * the database then ranks exactly.
 *
 * The embeddings are cached in the temp folder (keyed by model, precision and texts), so a second run starts at once.
 */

const USAGE =
  'options: --sizes N1,N2 (memories, 10000,100000,1000000) --queries N (questions, all) ' +
  '--sampled-queries N (questions at sizes above 100,000, 300) --sigmas S1,S2 (two-bit thresholds in standard ' +
  "deviations, the engine's) --json FILE";
const options = parseBenchOptions(
  process.argv.slice(2),
  ['sizes', 'queries', 'sampled-queries', 'sigmas', 'json'],
  USAGE,
);
/** The two-bit codes' thresholds compared (the engine's by default). */
const SIGMAS = listOption(options, 'sigmas', [THRESHOLD_SIGMAS]);
const SIZES = listOption(options, 'sizes', [10_000, 100_000, 1_000_000]).sort((a, b) => a - b);
const QUERY_LIMIT = numberOption(options, 'queries', Number.POSITIVE_INFINITY);
const SAMPLED_QUERIES = numberOption(options, 'sampled-queries', 300);
/** Sizes above this answer only --sampled-queries questions (the exact scan costs queries x rows). */
const FULL_QUERY_SIZE = 100_000;
/** The recall budgets. */
const KS = [40, 100, 300];
/** R as multiples of k. */
const R_FACTORS = [1, 2, 4, 8, 16];
/** The fraction of the exact top k the recommended R must reach. */
const TARGET = 0.97;
/** Hamming ranks are looked at up to this R (to find the R that reaches TARGET). */
const R_LIMIT = 64 * Math.max(...KS);
/** The center is the mean of the bank's first vectors (what a copy built while loading can know early). */
const CENTER_ROWS = 10_000;
/** Rows scored exactly at a time (the bank is generated chunk by chunk, never held as floats). */
const CHUNK = 10_000;

interface Embedded {
  turns: Float32Array[];
  questions: Float32Array[];
}

/** The turns' and questions' vectors, from the cache or the model (which then fills the cache). */
async function embedLocomo(turns: readonly string[], questions: readonly string[]): Promise<Embedded> {
  const model = benchModelDir();
  const dtype = benchModelDtype();
  const key = createHash('sha256')
    .update(JSON.stringify([model, dtype, turns, questions]))
    .digest('hex')
    .slice(0, 16);
  const folder = join(tmpdir(), 'mnemos-bench-binary-recall');
  const file = join(folder, `${key}.f32`);
  if (existsSync(file)) {
    const all = new Float32Array(new Uint8Array(readFileSync(file)).buffer);
    const dimension = all.length / (turns.length + questions.length);
    const rows = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) => all.subarray((from + i) * dimension, (from + i + 1) * dimension));
    console.log(`embeddings from ${file}`);
    return { turns: rows(0, turns.length), questions: rows(turns.length, questions.length) };
  }
  mkdirSync(folder, { recursive: true });
  console.log(`embedding ${turns.length} turns and ${questions.length} questions (cached in ${folder})`);
  const embedder = await createLocalEmbedder({ model, cacheDir: folder, dtype, log: () => undefined });
  try {
    const embed = async (texts: readonly string[], kind: 'query' | 'document') => {
      const out: Float32Array[] = new Array<Float32Array>(texts.length);
      for (const batch of batchesByLength(texts, BATCH_TOKENS[kind])) {
        const vectors = await embedder.embed(
          batch.map((i) => texts[i]!),
          kind,
        );
        batch.forEach((i, j) => (out[i] = vectors[j]!));
      }
      return out;
    };
    const embedded = { turns: await embed(turns, 'document'), questions: await embed(questions, 'query') };
    const all = [...embedded.turns, ...embedded.questions];
    const flat = new Float32Array(all.length * all[0]!.length);
    all.forEach((v, i) => flat.set(v, i * v.length));
    writeFileSync(file, new Uint8Array(flat.buffer));
    return embedded;
  } finally {
    await embedder.close();
  }
}

interface VariantResult {
  /** Mean fraction of the exact top k among the first R candidates, by k then R. */
  recall: Record<number, Record<number, number>>;
  /** The smallest R whose mean fraction reaches TARGET, by k (null: not within R_LIMIT). */
  r_for_target: Record<number, number | null>;
  distances_ms: LatencySummary;
  nearest_rows_ms: LatencySummary;
  /** signedDots over the Hamming top R_LIMIT (the re-scored variant only; ordering them is not counted). */
  signed_dots_ms?: LatencySummary;
}

/** The candidate orders compared: Hamming distance to plain or centered codes, and the centered re-scored. */
const VARIANTS = ['plain', 'centered', 'centered_rescored'] as const;
type Variant = (typeof VARIANTS)[number];

/** The compact tier's semantic candidates, by k: the fraction of the exact top k among them. */
interface CompactArmResult {
  /** The two-bit codes' threshold, in standard deviations. */
  threshold_sigmas: number;
  candidate_depth: Record<number, number>;
  nearest_codes: Record<number, number>;
  refined_depth: Record<number, number>;
  refined: Record<number, number>;
  refine_ms: LatencySummary;
}

interface SizeRun {
  memories: number;
  queries: number;
  code_bytes: number;
  exact_scan_seconds: number;
  variants: Record<Variant, VariantResult>;
  compact_arm: CompactArmResult[];
}

/** Vectors the engine learns a compact copy's two-bit levels from (vectors/vector-cache.ts). */
const LEVELS_ROWS = 2_000;

/** Evenly spread questions: all of them, or `count` picked at equal steps. */
function pickQueries(questions: readonly Float32Array[], count: number): Float32Array[] {
  if (count >= questions.length) return [...questions];
  return Array.from({ length: count }, (_, i) => questions[Math.floor((i * questions.length) / count)]!);
}

function meanOfFirst(turnVectors: readonly Float32Array[], rows: number): Float32Array {
  const dimension = turnVectors[0]!.length;
  const center = new Float32Array(dimension);
  for (let k = 0; k < rows; k++) {
    const v = derivedVector(turnVectors, k);
    for (let j = 0; j < dimension; j++) center[j] = center[j]! + v[j]!;
  }
  return center.map((x) => x / rows);
}

/**
 * Fills both code stores with the bank and answers each query's exact top max(KS) rows (best first), scanning the
 * bank in chunks with the engine's int16 scan.
 */
function fillAndRankExactly(
  turnVectors: readonly Float32Array[],
  size: number,
  queries: readonly Float32Array[],
  stores: readonly BinaryCodes[],
  residuals: readonly ResidualBits[],
): number[][] {
  const dimension = turnVectors[0]!.length;
  const matrix = Int16Matrix.create(dimension, CHUNK);
  if (!matrix) throw new Error('this bench needs WebAssembly SIMD (Node 20 or later on x64 or arm64)');
  const want = Math.max(...KS);
  const tops = queries.map(() => new TopK());
  for (let start = 0; start < size; start += CHUNK) {
    const rows = Math.min(CHUNK, size - start);
    for (let r = 0; r < rows; r++) {
      const vector = derivedVector(turnVectors, start + r);
      matrix.set(r, vector);
      for (const store of stores) store.set(start + r, vector);
      for (const bits of residuals) bits.set(start + r, vector);
    }
    queries.forEach((query, q) => {
      const scores = matrix.scores(query, rows);
      const top = tops[q]!;
      for (let r = 0; r < rows; r++) {
        const score = scores[r]!;
        if (top.wouldTake(score, want)) top.offer(String(start + r), score, want);
      }
    });
    process.stdout.write(`\r  ${size}: exact scan ${start + rows} of ${size}`);
  }
  process.stdout.write('\n');
  return tops.map((top) => top.results().map((hit) => Number(hit.id)));
}

/**
 * Each query's candidate ranks of its exact top rows, and the recall figures they give. The candidates: the Hamming
 * top R_LIMIT, in Hamming order or (`rescore`) ordered by signedDots, best first.
 */
function measureVariant(
  codes: BinaryCodes,
  size: number,
  queries: readonly Float32Array[],
  exact: readonly number[][],
  rescore: boolean,
): VariantResult {
  const scanMs: number[] = [];
  const pickMs: number[] = [];
  const rescoreMs: number[] = [];
  const limit = Math.min(R_LIMIT, size);
  /** By k: every query's candidate rank of each of its exact top k rows (Infinity past R_LIMIT). */
  const ranks = new Map<number, number[]>(KS.map((k) => [k, []]));
  queries.forEach((query, q) => {
    let t = performance.now();
    const distances = codes.distances(query, size);
    scanMs.push(performance.now() - t);
    t = performance.now();
    let candidates = nearestRows(distances, size, limit, () => true);
    pickMs.push(performance.now() - t);
    if (rescore) {
      t = performance.now();
      const dots = codes.signedDots(query, candidates);
      rescoreMs.push(performance.now() - t);
      const order = Array.from(candidates.keys()).sort((i, j) => dots[j]! - dots[i]! || i - j);
      candidates = Int32Array.from(order, (i) => candidates[i]!);
    }
    const rankOf = new Map<number, number>();
    candidates.forEach((row, i) => rankOf.set(row, i));
    for (const k of KS) {
      const list = ranks.get(k)!;
      for (const row of exact[q]!.slice(0, k)) list.push(rankOf.get(row) ?? Number.POSITIVE_INFINITY);
    }
  });
  const recall: VariantResult['recall'] = {};
  const rForTarget: VariantResult['r_for_target'] = {};
  for (const k of KS) {
    const list = ranks.get(k)!.sort((a, b) => a - b);
    recall[k] = Object.fromEntries(
      R_FACTORS.map((f) => [f * k, list.filter((rank) => rank < f * k).length / list.length]),
    );
    const needed = list[Math.ceil(TARGET * list.length) - 1]!;
    rForTarget[k] = Number.isFinite(needed) ? needed + 1 : null;
  }
  return {
    recall,
    r_for_target: rForTarget,
    distances_ms: summarise(scanMs),
    nearest_rows_ms: summarise(pickMs),
    ...(rescore ? { signed_dots_ms: summarise(rescoreMs) } : {}),
  };
}

/** The compact arm's candidates for each query, as recall/compact-arms.ts takes them, against the exact top k. */
function measureCompactArm(
  signs: BinaryCodes,
  residuals: ResidualBits,
  size: number,
  queries: readonly Float32Array[],
  exact: readonly number[][],
): Omit<CompactArmResult, 'threshold_sigmas'> {
  const refineMs: number[] = [];
  const found = new Map<number, { nearest: number; refined: number }>(KS.map((k) => [k, { nearest: 0, refined: 0 }]));
  queries.forEach((query, q) => {
    const distances = signs.distances(query, size);
    for (const k of KS) {
      const nearest = nearestRows(distances, size, Math.min(candidateDepth(k), size), () => true);
      const t = performance.now();
      const scores = residuals.scores(query, nearest, signs.codes, signs.bytesPerCode);
      const order = Array.from(nearest.keys()).sort((a, b) => scores[b]! - scores[a]! || a - b);
      const refined = new Set(order.slice(0, refinedDepth(k)).map((i) => nearest[i]!));
      if (k === 100) refineMs.push(performance.now() - t);
      const inNearest = new Set(nearest);
      const top = exact[q]!.slice(0, k);
      const f = found.get(k)!;
      f.nearest += top.filter((row) => inNearest.has(row)).length / k;
      f.refined += top.filter((row) => refined.has(row)).length / k;
    }
  });
  const per = (pick: (f: { nearest: number; refined: number }) => number) =>
    Object.fromEntries(KS.map((k) => [k, pick(found.get(k)!) / queries.length]));
  return {
    candidate_depth: Object.fromEntries(KS.map((k) => [k, candidateDepth(k)])),
    nearest_codes: per((f) => f.nearest),
    refined_depth: Object.fromEntries(KS.map((k) => [k, refinedDepth(k)])),
    refined: per((f) => f.refined),
    refine_ms: summarise(refineMs),
  };
}

function measureSize(embedded: Embedded, size: number): SizeRun {
  const count = Math.min(QUERY_LIMIT, size > FULL_QUERY_SIZE ? SAMPLED_QUERIES : Number.POSITIVE_INFINITY);
  const queries = pickQueries(embedded.questions, count);
  const dimension = embedded.turns[0]!.length;
  const plain = BinaryCodes.create(dimension, size);
  const centered = BinaryCodes.create(dimension, size, meanOfFirst(embedded.turns, Math.min(size, CENTER_ROWS)));
  const sample = Array.from({ length: Math.min(size, LEVELS_ROWS) }, (_, k) => derivedVector(embedded.turns, k));
  const residuals = SIGMAS.map((sigmas) => new ResidualBits(ResidualLevels.learn(sample, sigmas)!, size));
  // The center is the sample's mean whatever the threshold, so one store of sign codes serves every threshold.
  const signs = BinaryCodes.create(dimension, size, residuals[0]!.levels.center);
  const started = performance.now();
  const exact = fillAndRankExactly(embedded.turns, size, queries, [plain, centered, signs], residuals);
  const exactSeconds = (performance.now() - started) / 1000;
  return {
    memories: size,
    queries: queries.length,
    code_bytes: plain.bytes,
    exact_scan_seconds: exactSeconds,
    variants: {
      plain: measureVariant(plain, size, queries, exact, false),
      centered: measureVariant(centered, size, queries, exact, false),
      centered_rescored: measureVariant(centered, size, queries, exact, true),
    },
    compact_arm: residuals.map((bits, i) => ({
      ...measureCompactArm(signs, bits, size, queries, exact),
      threshold_sigmas: SIGMAS[i]!,
    })),
  };
}

const fixed = (x: number, digits: number, width: number) => x.toFixed(digits).padStart(width);

function printRun(run: SizeRun): void {
  const { plain, centered_rescored: rescored } = run.variants;
  console.log(
    `\n${run.memories} memories, ${run.queries} queries: one scan of the codes p50 ${plain.distances_ms.p50.toFixed(2)} ms, ` +
      `the nearest ${Math.min(R_LIMIT, run.memories)} rows from its distances p50 ${plain.nearest_rows_ms.p50.toFixed(2)} ms, ` +
      `signedDots of those p50 ${rescored.signed_dots_ms?.p50.toFixed(2)} ms`,
  );
  const header = R_FACTORS.map((f) => `R=${f}k`.padStart(8)).join('');
  console.log(`${'candidates'.padEnd(18)}${'k'.padStart(5)}${header}${`R for ${TARGET}`.padStart(12)}`);
  for (const variant of VARIANTS) {
    const result = run.variants[variant];
    for (const k of KS) {
      const cells = R_FACTORS.map((f) => fixed(result.recall[k]![f * k]!, 3, 8)).join('');
      const r = result.r_for_target[k];
      console.log(
        `${variant.padEnd(18)}${String(k).padStart(5)}${cells}${(r === null ? `>${R_LIMIT}` : String(r)).padStart(12)}`,
      );
    }
  }
  for (const arm of run.compact_arm) {
    console.log(
      `the compact tier's semantic candidates, threshold ${arm.threshold_sigmas} standard deviations ` +
        `(two-bit narrowing p50 ${arm.refine_ms.p50.toFixed(2)} ms at k=100):`,
    );
    for (const k of KS) {
      console.log(
        `  k=${k}: exact top k among the ${arm.candidate_depth[k]} nearest sign codes ` +
          `${arm.nearest_codes[k]!.toFixed(3)}, among the ${arm.refined_depth[k]} of them the two-bit codes keep ` +
          arm.refined[k]!.toFixed(3),
      );
    }
  }
}

async function main() {
  const loadAverage = loadavg();
  const locomo = loadLocomoText();
  const embedded = await embedLocomo(locomo.turns, locomo.questions);
  console.log(
    `Binary-code candidate recall: ${locomo.turns.length} turns, ${locomo.questions.length} questions, ` +
      `${embedded.turns[0]!.length} dimensions, load average ${loadAverage[0]!.toFixed(1)}`,
  );
  const runs: SizeRun[] = [];
  for (const size of SIZES) {
    const run = measureSize(embedded, size);
    printRun(run);
    runs.push(run);
  }
  const json = options.values.get('json');
  if (json !== undefined) {
    const out = {
      bench: 'binary-recall',
      date: new Date().toISOString(),
      machine: { cores: availableParallelism(), load_average_at_start: loadAverage, node: process.version },
      options: { sizes: SIZES, ks: KS, r_factors: R_FACTORS, target: TARGET, center_rows: CENTER_ROWS, sigmas: SIGMAS },
      model: { name: basename(benchModelDir()), dtype: benchModelDtype() },
      runs,
    };
    writeFileSync(resolve(json), `${JSON.stringify(out, null, 2)}\n`);
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
