import { countTokens } from '../util/tokens.js';
import { eventLoopSlicer, yieldToEventLoop } from '../util/yield.js';

/**
 * Splits long content into pieces the embedding model can see whole (it reads ~256 word pieces). Cuts at paragraph,
 * then sentence, then word boundaries; short content stays one piece. Characters alone do not bound what the model
 * and the recall budgets see (a character of CJK text or an emoji is one to three tokens), so pieces are also bounded
 * in tokens: a piece over MAX_CHUNK_TOKENS is halved until it fits.
 */
export const MAX_CHUNK_CHARS = 1200;
/**
 * One token per character of the character bound: prose (about 300 tokens per 1,200 characters) and long words of
 * ASCII letters (counted at most one token per byte) never reach it; denser text (CJK, emoji, accented runs) is split
 * further.
 */
export const MAX_CHUNK_TOKENS = MAX_CHUNK_CHARS;

export interface Chunk {
  text: string;
  /** cl100k token count (util/tokens.ts: exact, or an upper bound for text with very long runs). */
  tokens: number;
}

/** Texts longer than this start chunking in a turn of the event loop of their own (see chunkText). */
const OWN_TURN_CHARS = 64 * 1024;

/**
 * Chunks of at most `maxChars` characters and `maxTokens` tokens, with their token counts. Yields to the event loop
 * between chunks every few milliseconds, so a large input never holds it. A long text starts in a turn of its own:
 * reading and validating the request that carried it took the turn before, and the two together would hold the loop
 * for longer than one slice.
 */
export async function chunkText(
  text: string,
  maxChars = MAX_CHUNK_CHARS,
  maxTokens = MAX_CHUNK_TOKENS,
): Promise<Chunk[]> {
  if (text.length > OWN_TURN_CHARS) await yieldToEventLoop();
  const pause = eventLoopSlicer();
  const chunks: Chunk[] = [];
  // Pieces still to check, the next one last.
  const pending = splitByCharacters(text, maxChars).reverse();
  while (pending.length > 0) {
    const piece = pending.pop()!;
    const tokens = countTokens(piece);
    const halves = tokens <= maxTokens ? [] : halve(piece);
    if (halves.length < 2) chunks.push({ text: piece, tokens });
    else pending.push(...halves.reverse());
    await pause();
  }
  return chunks;
}

/** Two non-empty halves of `text` (of at least two characters), cut at the space nearest the middle if there is one. */
function halve(text: string): string[] {
  const middle = text.length >> 1;
  const before = text.lastIndexOf(' ', middle);
  const after = text.indexOf(' ', middle);
  let cut = middle;
  if (before > 0 && (after === -1 || middle - before <= after - middle)) cut = before;
  else if (after > 0 && after < text.length - 1) cut = after;
  cut = cutBefore(text, cut);
  return [text.slice(0, cut).trim(), text.slice(cut).trim()].filter((half) => half !== '');
}

/** Pieces of at most `max` characters. */
export function splitByCharacters(text: string, max: number): string[] {
  if (text.length <= max) return [text];
  const units = text
    .split(/\n\s*\n/)
    .flatMap((para) => (para.length <= max ? [para] : sentences(para)))
    .flatMap((sentence) => (sentence.length <= max ? [sentence] : splitWords(sentence, max)));
  const chunks: string[] = [];
  let current = '';
  for (const unit of units) {
    const piece = unit.trim();
    if (piece === '') continue;
    if (current !== '' && current.length + 1 + piece.length > max) {
      chunks.push(current);
      current = '';
    }
    current = current === '' ? piece : `${current}\n${piece}`;
  }
  if (current !== '') chunks.push(current);
  return chunks;
}

/**
 * The text cut at every whitespace run that follows sentence-ending punctuation, the punctuation kept. A scan for the
 * punctuation, not a lookbehind pattern: that one is tried at every position and took most of the time of splitting
 * a long text without punctuation.
 */
function sentences(text: string): string[] {
  const out: string[] = [];
  const ends = /[.!?。！？]\s+/g;
  let start = 0;
  for (let match = ends.exec(text); match !== null; match = ends.exec(text)) {
    out.push(text.slice(start, match.index + 1));
    start = ends.lastIndex;
  }
  out.push(text.slice(start));
  return out;
}

function splitWords(text: string, max: number): string[] {
  const out: string[] = [];
  let current = '';
  for (const word of text.split(/\s+/)) {
    // A single "word" longer than max (no spaces, e.g. CJK text or a long token) is cut by characters.
    for (let i = 0; i < word.length;) {
      const end = cutBefore(word, Math.min(i + max, word.length));
      const part = word.slice(i, end);
      i = end;
      if (current !== '' && current.length + 1 + part.length > max) {
        out.push(current);
        current = '';
      }
      current = current === '' ? part : `${current} ${part}`;
    }
  }
  if (current !== '') out.push(current);
  return out;
}

/** `at`, or one character earlier when `at` would cut a surrogate pair in two (never below 1). */
function cutBefore(text: string, at: number): number {
  const code = text.charCodeAt(at - 1);
  return at > 1 && at < text.length && code >= 0xd800 && code <= 0xdbff ? at - 1 : at;
}
