import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { eventLoopSlicer } from './yield.js';

/**
 * Token counts for `max_tokens` budgets, with the cl100k_base BPE (the tokenizer Hindsight uses for the same budget,
 * and close to what today's chat models count), so a budget means the same thing to clients of either engine.
 *
 * The tokenizer cuts text into pieces (words, number groups, punctuation and whitespace runs) and merges each piece's
 * bytes on its own. Merging is quadratic in a piece's length and the pieces of letters, punctuation or whitespace are
 * unbounded, so one long run would hold the event loop for minutes. Pieces longer than MAX_PIECE_BYTES are therefore
 * not merged: they count as their UTF-8 byte length. That is an upper bound of what merging gives, because BPE starts
 * from one token per byte and every merge turns two tokens into one. The rest is counted exactly, so the count equals
 * the tokenizer's when no piece is long, and is never below it otherwise.
 */

/** Pieces longer than this many UTF-8 bytes count one token per byte instead of being merged. */
export const MAX_PIECE_BYTES = 128;

/**
 * Characters counted between two chances for other work to run, in the yielding count: about a millisecond of prose,
 * and a few of text whose words the tokenizer does not know (made-up or random words merge more slowly).
 */
const SLICE_CHARS = 4096;

/**
 * cl100k's piece pattern, as tiktoken defines it. A stretch of text that starts at a piece boundary and ends at one
 * just after a piece with a non-space last character has the same pieces on its own as inside the whole text (the
 * pattern looks behind nothing; only whitespace pieces look at what follows or at the end of the text), so such
 * stretches are counted separately with the same result.
 */
const PIECE_PATTERN = String.raw`'(?:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;
const WHITESPACE = /\s/u;

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Exact count of a stretch of short pieces; special-token text (`<|endoftext|>`) counts as plain text. */
function countExactly(text: string, start: number, end: number): number {
  return end > start ? countCl100k(text.slice(start, end), { disallowedSpecial: new Set() }) : 0;
}

/**
 * Counts from `start` (a piece boundary) until at least `budget` characters are done, stopping where a stretch may
 * end. Returns the count and where it stopped.
 */
function countFrom(text: string, start: number, budget: number): { tokens: number; end: number } {
  const pieces = new RegExp(PIECE_PATTERN, 'giu');
  pieces.lastIndex = start;
  let tokens = 0;
  /** The stretch being gathered starts here; it may end at `safeEnd`. */
  let stretchStart = start;
  let safeEnd = start;
  let match: RegExpExecArray | null;
  while ((match = pieces.exec(text)) !== null) {
    const piece = match[0];
    const pieceEnd = pieces.lastIndex;
    // A UTF-16 unit is at most 3 UTF-8 bytes, so a piece this short cannot be long in bytes.
    if (piece.length * 3 > MAX_PIECE_BYTES && utf8Bytes(piece) > MAX_PIECE_BYTES) {
      // Whitespace pieces just before it go with it: every one of them counts no more than its bytes either.
      tokens += countExactly(text, stretchStart, safeEnd) + utf8Bytes(text.slice(safeEnd, pieceEnd));
      stretchStart = safeEnd = pieceEnd;
    } else if (!WHITESPACE.test(piece[piece.length - 1]!)) {
      safeEnd = pieceEnd;
    }
    if (safeEnd - start >= budget) {
      return { tokens: tokens + countExactly(text, stretchStart, safeEnd), end: safeEnd };
    }
  }
  return { tokens: tokens + countExactly(text, stretchStart, text.length), end: text.length };
}

/** Token count of `text` (exact, or an upper bound when it holds very long runs); linear in its length. */
export function countTokens(text: string): number {
  return countFrom(text, 0, Infinity).tokens;
}

/**
 * Token counts of caller texts of any size, letting other requests run every few milliseconds of counting so that a
 * large input never holds the event loop.
 */
export async function countTokensYielding(texts: readonly string[]): Promise<number[]> {
  const pause = eventLoopSlicer();
  const counts: number[] = [];
  for (const text of texts) {
    let total = 0;
    let at = 0;
    do {
      const { tokens, end } = countFrom(text, at, SLICE_CHARS);
      total += tokens;
      at = end;
      await pause();
    } while (at < text.length);
    counts.push(total);
  }
  return counts;
}
