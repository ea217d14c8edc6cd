/** Results whose word sets overlap this much (Jaccard) with a better result are near-copies and are pushed down. */
export const NEAR_COPY_JACCARD = 0.9;

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
 * The word signatures (wordSignature) of the results kept so far, indexed so that asking whether a new
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

/** FNV-1a of a word. */
function wordHash(word: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * A text's lowercased words (runs of letters and digits) as their 32-bit hashes, sorted ascending, each once. Near-copy
 * checks compare these by merging instead of building and probing Sets of strings, and the bank index keeps each
 * memory's signature once computed. Two different words share a hash about once in four billion pairs, which could
 * make two texts look one word closer than they are.
 */
export function wordSignature(text: string): Uint32Array {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const hashes = new Uint32Array(words.length);
  for (let i = 0; i < words.length; i++) hashes[i] = wordHash(words[i]!);
  hashes.sort();
  let n = 0;
  for (let i = 0; i < hashes.length; i++) if (i === 0 || hashes[i] !== hashes[i - 1]) hashes[n++] = hashes[i]!;
  return hashes.slice(0, n);
}

/** Whether two texts are near-copies (Jaccard of their word sets >= NEAR_COPY_JACCARD), from their signatures. */
export function signaturesNearCopy(a: Uint32Array, b: Uint32Array): boolean {
  const small = Math.min(a.length, b.length);
  const large = Math.max(a.length, b.length);
  if (large === 0) return true;
  if (small / large < NEAR_COPY_JACCARD) return false;
  const total = a.length + b.length;
  // The most words the two can still share: each word of `a` not in `b` lowers it by one; once even that would leave
  // the Jaccard under the threshold, the answer is no.
  let best = a.length;
  let inter = 0;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x === y) {
      inter++;
      i++;
      j++;
    } else if (x < y) {
      i++;
      if (--best / (total - best) < NEAR_COPY_JACCARD) return false;
    } else j++;
  }
  return inter / (total - inter) >= NEAR_COPY_JACCARD;
}
