/**
 * The per-candidate signals recall fuses, and their weights. The weights were chosen by measurement (coordinate ascent
 * on evidence recall@10 + recall@20 over three LoCoMo conversations, checked on two held-out ones; docs/benchmarks.md)
 * and are deliberately few: every signal is generic (no rule knows any dataset's names, dates or wording).
 */

export const WEIGHTS = {
  /** BM25, divided by the best BM25 of the query. */
  keyword: 0.7,
  /** Cosine similarity to the query. */
  semantic: 0.85,
  /** How much better the better of the memory's two neighbours (retained next to it in the same call) matched the
   * keywords than the memory itself (normalised BM25, floored at 0). */
  neighbour: 0.45,
  /** 1 when the memory is by (or about) the one person the query names. */
  speaker: 0.5,
  /** How much better the better of the memory's two neighbours matched the query's meaning (cosine excess, floored at 0). */
  neighbourSemantic: 0.3,
  /** As `neighbour`, for the memories two positions away (an answer often comes two turns after its question). */
  neighbour2: 0.2,
  /** Mean cosine of the two best candidates of the memory's document (or retain call); its own when alone. */
  document: 1.2,
  /** Mean normalised BM25 of the two best candidates of the memory's document (or retain call). */
  documentKeyword: 0.3,
  /** BM25 for the terms pseudo-relevance feedback adds (feedback.ts), divided by the best such score. */
  feedback: 0.3,
  /** Closeness of occurred_at to the time the query names (0 when it names none). */
  temporal: 0.6,
} as const;

export type Signal = keyof typeof WEIGHTS;

/** Results whose word sets overlap this much (Jaccard) with a better result are near-copies and are pushed down. */
export const NEAR_COPY_JACCARD = 0.9;
export const NEAR_COPY_FACTOR = 0.5;

const SPEAKER = /^([^:\n]{1,40}):\s/u;

/** The speaker prefix of a memory written as "Name: text", lowercased; null when there is none. */
export function speakerOf(text: string): string | null {
  // Most memories have no such prefix: the first colon must sit within the first 41 characters.
  const colon = text.indexOf(':');
  if (colon < 1 || colon > 40) return null;
  const m = SPEAKER.exec(text);
  const name = m?.[1]?.trim();
  return name && /\p{L}/u.test(name) ? name.toLowerCase() : null;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether `name` occurs in `query` as a whole word (case-insensitive, any script). */
export function mentions(query: string, name: string): boolean {
  // Most names are not in the query at all: a plain substring test rules them out before a pattern is compiled.
  if (!query.toLowerCase().includes(name.toLowerCase())) return false;
  return new RegExp(`(^|[^\\p{L}\\p{N}])${escapeRegExp(name.toLowerCase())}([^\\p{L}\\p{N}]|$)`, 'u').test(query.toLowerCase());
}

/**
 * The people/entities the query names among `names` (speaker prefixes and extracted entities of the candidates).
 * The speaker signal applies only when exactly one is named: a question about two people says nothing about whose
 * turn holds the answer.
 */
export function namedEntities(query: string, names: Iterable<string>): string[] {
  const found = new Set<string>();
  for (const n of names) if (n.length >= 2 && mentions(query, n)) found.add(n.toLowerCase());
  return [...found];
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
