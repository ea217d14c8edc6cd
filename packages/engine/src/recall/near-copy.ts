import { NEAR_COPY_JACCARD, signaturesNearCopy } from './signals.js';

/**
 * How many of a signature's first hashes prefix filtering needs: two sets with Jaccard >= t share at least t * |A|
 * words, so their prefixes of length |A| - ceil(t * |A|) + 1 (and likewise for B) share a word, for any one fixed order
 * of words. Signatures are sorted by hash, a fixed order unrelated to the words' frequency or spelling, so the prefix is
 * the signature's start.
 */
function prefixLength(n: number): number {
  // The small epsilon keeps float error (t * n landing just above an integer) from shortening the prefix.
  return n - Math.ceil(NEAR_COPY_JACCARD * n - 1e-9) + 1;
}

/**
 * The word signatures (signals.ts wordSignature) of the results kept so far, indexed so that asking whether a new
 * candidate is a near-copy of any of them (Jaccard >= NEAR_COPY_JACCARD) compares it only with the few sharing a prefix
 * hash, instead of all of them (prefix filtering, as in set-similarity joins): the answer is exactly
 * `kept.some((k) => signaturesNearCopy(k, words))`.
 */
export class NearCopyIndex {
  private readonly kept: Uint32Array[] = [];
  private readonly byPrefixHash = new Map<number, number[]>();
  private keptEmpty = false;
  /** tried[i] === this.asked when kept[i] was already compared during the current question. */
  private readonly tried: number[] = [];
  private asked = 0;

  /** Whether `words` is a near-copy of a signature added before. */
  has(words: Uint32Array): boolean {
    return words.length === 0 ? this.keptEmpty : this.matches(words);
  }

  add(words: Uint32Array): void {
    if (words.length === 0) this.keptEmpty = true;
    else this.insert(words);
  }

  /** Adds `words` unless it is a near-copy of a signature added before; says whether it was added. */
  admit(words: Uint32Array): boolean {
    if (words.length === 0) {
      if (this.keptEmpty) return false;
      this.keptEmpty = true;
      return true;
    }
    if (this.matches(words)) return false;
    this.insert(words);
    return true;
  }

  private matches(words: Uint32Array): boolean {
    const asked = ++this.asked;
    const length = prefixLength(words.length);
    for (let p = 0; p < length; p++) {
      const candidates = this.byPrefixHash.get(words[p]!);
      if (!candidates) continue;
      for (const i of candidates) {
        if (this.tried[i] === asked) continue;
        this.tried[i] = asked;
        if (signaturesNearCopy(this.kept[i]!, words)) return true;
      }
    }
    return false;
  }

  private insert(words: Uint32Array): void {
    const index = this.kept.push(words) - 1;
    this.tried.push(0);
    const length = prefixLength(words.length);
    for (let p = 0; p < length; p++) {
      const list = this.byPrefixHash.get(words[p]!);
      if (list) list.push(index);
      else this.byPrefixHash.set(words[p]!, [index]);
    }
  }
}
