import { percentile } from './stats.js';
import { rng } from './synthetic.js';

/** One measurement of the same work on each side, taken back to back. */
export interface Pair {
  base: number;
  head: number;
}

/** The head's median over the base's, with a bootstrap 95% interval. */
export interface PairedRatio {
  ratio: number;
  low: number;
  high: number;
}

const median = (values: number[]): number => percentile(values, 50);

/**
 * median(head) / median(base) over paired samples, and its 95% interval by the percentile bootstrap: the pairs are
 * resampled as pairs (so each resample keeps the machine's moment shared by both sides of a pair), `resamples` times
 * with a fixed seed, so the same samples always give the same interval.
 */
export function pairedMedianRatio(pairs: readonly Pair[], resamples = 2000, seed = 17): PairedRatio {
  if (pairs.length === 0) return { ratio: Number.NaN, low: Number.NaN, high: Number.NaN };
  const ratioOf = (sample: readonly Pair[]) => median(sample.map((p) => p.head)) / median(sample.map((p) => p.base));
  const random = rng(seed);
  const ratios: number[] = [];
  for (let r = 0; r < resamples; r++) {
    const sample = Array.from({ length: pairs.length }, () => pairs[Math.floor(random() * pairs.length)]!);
    ratios.push(ratioOf(sample));
  }
  return { ratio: ratioOf(pairs), low: percentile(ratios, 2.5), high: percentile(ratios, 97.5) };
}

/**
 * Runs `measure` for both sides of pair `index`, the base first on even pairs and the head first on odd ones, so
 * neither side always meets a machine just warmed (or just disturbed) by the other.
 */
export async function measurePair(index: number, measure: (side: 'base' | 'head') => Promise<number>): Promise<Pair> {
  if (index % 2 === 0) {
    const base = await measure('base');
    return { base, head: await measure('head') };
  }
  const head = await measure('head');
  return { base: await measure('base'), head };
}
