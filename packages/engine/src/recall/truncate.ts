import { countTokens } from '../util/tokens.js';

/**
 * The longest beginning of `text` that fits in `maxTokens` tokens of the budget's own count (util/tokens.ts), cut
 * after a whole word; when not even the first word fits, cut between characters. Empty when nothing fits.
 */
export function truncateToTokens(text: string, maxTokens: number): string {
  if (countTokens(text) <= maxTokens) return text;
  const wordEnds = [...text.matchAll(/\S(?=\s)/gu)].map((m) => m.index + m[0].length);
  const byWord = longestFitting(text, wordEnds, maxTokens);
  if (byWord !== '') return byWord;
  const characterEnds: number[] = [];
  let at = 0;
  for (const character of text) characterEnds.push((at += character.length));
  return longestFitting(text, characterEnds, maxTokens);
}

/** The longest `text.slice(0, end)` over the ascending `ends` that fits, by bisection; empty when none does. */
function longestFitting(text: string, ends: readonly number[], maxTokens: number): string {
  let low = 0;
  let high = ends.length;
  // Invariant: every end before `low` fits (by the count's near-monotonicity), none from `high` on was found to.
  while (low < high) {
    const middle = (low + high) >> 1;
    if (countTokens(text.slice(0, ends[middle])) <= maxTokens) low = middle + 1;
    else high = middle;
  }
  // Bisection assumes a longer beginning never counts fewer tokens; step back until the count itself agrees.
  for (let i = low - 1; i >= 0; i--) {
    const candidate = text.slice(0, ends[i]);
    if (countTokens(candidate) <= maxTokens) return candidate;
  }
  return '';
}
