import { NEAR_COPY_JACCARD, nearCopy } from './signals.js';

/** FNV-1a of a word: a fixed global order of words that is unrelated to their frequency or spelling. */
function wordHash(word: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * The first words of a set in one fixed global order, as many as prefix filtering needs: two sets with Jaccard >= t
 * share at least t * |A| words, so their prefixes of length |A| - ceil(t * |A|) + 1 (and likewise for B) share a word.
 * Any fixed order is exact; longer words first (then by hash) puts rare words in the prefixes and common short ones
 * ("the", "a", "on") last, so few kept sets share a prefix word by chance.
 */
function prefix(words: ReadonlySet<string>): string[] {
  const n = words.size;
  // The small epsilon keeps float error (t * n landing just above an integer) from shortening the prefix.
  const length = n - Math.ceil(NEAR_COPY_JACCARD * n - 1e-9) + 1;
  return [...words]
    .map((w) => [wordHash(w), w] as const)
    .sort((a, b) => b[1].length - a[1].length || a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .slice(0, length)
    .map(([, w]) => w);
}

/**
 * The word sets of the results kept so far, indexed so that asking whether a new candidate is a near-copy of any of
 * them (Jaccard >= NEAR_COPY_JACCARD) compares it only with the few sets sharing a prefix word, instead of all of
 * them (prefix filtering, as in set-similarity joins): the answer is exactly `kept.some((k) => nearCopy(k, words))`.
 */
export class NearCopyIndex {
  private readonly kept: Array<ReadonlySet<string>> = [];
  private readonly byPrefixWord = new Map<string, number[]>();
  private keptEmpty = false;

  /** Whether `words` is a near-copy of a set added before. */
  has(words: ReadonlySet<string>): boolean {
    return words.size === 0 ? this.keptEmpty : this.matches(words, prefix(words));
  }

  add(words: ReadonlySet<string>): void {
    if (words.size === 0) this.keptEmpty = true;
    else this.insert(words, prefix(words));
  }

  /** Adds `words` unless it is a near-copy of a set added before (its prefix computed once); says whether it was added. */
  admit(words: ReadonlySet<string>): boolean {
    if (words.size === 0) {
      if (this.keptEmpty) return false;
      this.keptEmpty = true;
      return true;
    }
    const p = prefix(words);
    if (this.matches(words, p)) return false;
    this.insert(words, p);
    return true;
  }

  private matches(words: ReadonlySet<string>, wordsPrefix: readonly string[]): boolean {
    const tried = new Set<number>();
    for (const w of wordsPrefix) {
      for (const i of this.byPrefixWord.get(w) ?? []) {
        if (tried.has(i)) continue;
        tried.add(i);
        if (nearCopy(this.kept[i]!, words)) return true;
      }
    }
    return false;
  }

  private insert(words: ReadonlySet<string>, wordsPrefix: readonly string[]): void {
    const index = this.kept.push(words) - 1;
    for (const w of wordsPrefix) {
      const list = this.byPrefixWord.get(w);
      if (list) list.push(index);
      else this.byPrefixWord.set(w, [index]);
    }
  }
}
