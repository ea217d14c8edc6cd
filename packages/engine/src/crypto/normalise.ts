import stem from 'wink-porter2-stemmer';
import { eventLoopSlicer } from '../util/yield.js';

/**
 * Turns text into search terms in JavaScript the way Postgres's `english` text-search configuration does for ordinary
 * prose (the plaintext path's document and query side), so the blind index ranks like the plaintext index:
 * words are runs of letters and digits, lowercased; English stop words (Postgres's english.stop list, the Snowball
 * list) are dropped but still take a position; words of letters only are stemmed with Porter2 (Snowball English, the
 * stemmer behind Postgres's english_stem); words with digits are kept as they are. Known differences from the
 * Postgres parser (emails, URLs, hyphenated compounds, decimals) are listed in docs/security.md.
 */

const STOP_WORDS = new Set(
  `i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it
  its itself they them their theirs themselves what which who whom this that these those am is are was were be been
  being have has had having do does did doing a an the and but if or because as until while of at by for with about
  against between into through during before after above below to from up down in out on off over under again further
  then once here there when where why how all any both each few more most other some such no nor not only own same so
  than too very s t can will just don should now`.split(/\s+/),
);

/** Postgres keeps at most this many positions per lexeme and positions up to 16383. */
const MAX_POSITIONS = 256;
const MAX_POSITION = 16383;

/**
 * Longer words are kept as they are: the stemmer's time grows with the square of a word's length (a 2,000-letter word
 * takes a fifth of a second), no English word comes near this length, and so a long run in caller text stays cheap.
 */
export const MAX_STEMMED_CHARS = 64;

/** Stems already computed; prose repeats its vocabulary, and the stemmer is slow per word. Starts over when full. */
const stems = new Map<string, string>();
const MAX_CACHED_STEMS = 50_000;

function cachedStem(word: string): string {
  let stemmed = stems.get(word);
  if (stemmed === undefined) {
    if (stems.size >= MAX_CACHED_STEMS) stems.clear();
    stemmed = stem(word);
    stems.set(word, stemmed);
  }
  return stemmed;
}

export function normaliseWord(word: string): string | undefined {
  const w = word.toLowerCase();
  if (STOP_WORDS.has(w)) return undefined;
  return w.length <= MAX_STEMMED_CHARS && /^\p{L}+$/u.test(w) ? cachedStem(w) : w;
}

/** Words normalised between two checks of the time spent (a check costs more than a cached word). */
const WORDS_PER_CHECK = 256;

/**
 * Lexemes of a document with their 1-based positions (stop words count for position, like to_tsvector). A long text
 * of new words takes a fraction of a second to normalise, so this yields to the event loop every few milliseconds.
 */
export async function documentLexemes(text: string): Promise<Map<string, number[]>> {
  const pause = eventLoopSlicer();
  const out = new Map<string, number[]>();
  let position = 0;
  let words = 0;
  for (const match of text.matchAll(/[\p{L}\p{N}]+/gu)) {
    if (++words % WORDS_PER_CHECK === 0) await pause();
    position = Math.min(position + 1, MAX_POSITION);
    const lexeme = normaliseWord(match[0]);
    if (lexeme === undefined || lexeme === '') continue;
    const list = out.get(lexeme);
    if (list === undefined) out.set(lexeme, [position]);
    else if (list.length < MAX_POSITIONS) list.push(position);
  }
  return out;
}

/** Distinct lexemes of a query (stop words dropped), at most 64. */
export function queryLexemes(query: string): string[] {
  const out = new Set<string>();
  for (const match of query.matchAll(/[\p{L}\p{N}]+/gu)) {
    const lexeme = normaliseWord(match[0]);
    if (lexeme !== undefined && lexeme !== '') out.add(lexeme);
    if (out.size >= 64) break;
  }
  return [...out];
}
