import { countTokens } from '../util/tokens.js';
import { maxOf } from '../util/extremes.js';

/**
 * A model pads every text of a batch to the batch's longest, so a batch costs about its size times its longest
 * text's length in tokens. Texts of similar length batched together waste little on padding.
 */
export function paddedTokens(lengths: readonly number[]): number {
  return lengths.length * Math.max(0, maxOf(lengths, 0));
}

/**
 * Splits texts (given by their token lengths) into batches of similar length: indices sorted by length (ties in the
 * given order), cut into consecutive groups whose padded size stays within `maxTokens`. A text longer than the cap
 * goes alone. Every index appears in exactly one group; each group lists its indices from shortest to longest.
 */
export function groupByLength(lengths: readonly number[], maxTokens: number): number[][] {
  const order = lengths.map((_, i) => i).sort((a, b) => lengths[a]! - lengths[b]! || a - b);
  const groups: number[][] = [];
  let group: number[] = [];
  for (const index of order) {
    // Sorted ascending, so the text being added is the group's longest.
    if (group.length > 0 && (group.length + 1) * lengths[index]! > maxTokens) {
      groups.push(group);
      group = [];
    }
    group.push(index);
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

/**
 * The local model reads at most this many tokens of a text (its tokenizer's `model_max_length` for the MiniLM family);
 * a longer text costs the same as one of this length.
 */
const MODEL_MAX_TOKENS = 512;

/**
 * Texts this long (about MODEL_MAX_TOKENS tokens of prose, at about four characters per English token) count as the
 * cap without counting: the model reads no further, and a very long text costs nothing to measure.
 */
const COUNTED_CHARS = 4 * MODEL_MAX_TOKENS;

/**
 * A text's length in model tokens, for grouping. The cl100k BPE count (util/tokens.ts, microseconds per text on the
 * main thread) stands in for the model's WordPiece count, which only the model's thread has: on conversational English
 * the two correlate at 0.997, and the model adds its two marker tokens.
 */
export function estimateModelTokens(text: string): number {
  if (text.length >= COUNTED_CHARS) return MODEL_MAX_TOKENS;
  return Math.min(MODEL_MAX_TOKENS, countTokens(text) + 2);
}
