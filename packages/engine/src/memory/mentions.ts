/**
 * The cheap entity extractor: who and what a memory names, found without an LLM at retain time, so a bank's entities
 * answer in every configuration (docs/api.md, "Entities"). Two rules:
 *
 * - `speaker`: the sender of a chat message (its `speaker` metadata) or a "Name: text" prefix of at most 40 characters
 *   whose name is one to four capitalised words.
 * - `name`: runs of one to four capitalised words ("Alice", "New York", "Acme Corp") in the text. A single word that
 *   starts a sentence counts only when it is not a common sentence opener ("The", "We", "Yesterday"), and calendar
 *   words (weekdays, months) never count: they are dates, not entities.
 */

import type { Metadata } from './types.js';

/** What a memory names, and how it was found. */
export interface Mention {
  name: string;
  kind: EntityKind;
}

/**
 * How an entity was found: `speaker` and `name` by this extractor, `extracted` by the LLM's fact extraction (its facts'
 * entities), `given` by the caller (a retain item's `entities`).
 */
export type EntityKind = 'speaker' | 'name' | 'extracted' | 'given';

/** Names per memory, so a long list of names costs a bounded number of rows. */
const MAX_MENTIONS = 32;
/** The longest name kept; longer runs are phrases in title case, not names. */
export const MAX_ENTITY_CHARS = 200;
const MAX_WORDS = 4;

const PREFIX = /^([^:\n]{1,40}):\s/u;
const CAPITALISED = /^\p{Lu}[\p{L}\p{M}'’-]*$/u;
const TOKEN = /[\p{L}\p{M}\p{N}'’-]+|[^\s\p{L}\p{M}\p{N}]/gu;
const WORDLIKE = /^[\p{L}\p{M}\p{N}]/u;
const SENTENCE_END = /^[.!?]$/u;

/** Sentence openers and pronouns: capitalised because they open a sentence (or "I"), not because they name anyone. */
const OPENERS = new Set(
  (
    "a an the i i'm i've i'll i'd my we we're our you your he she it it's its they their this that these those " +
    'there here what when where why who how which if then so but and or also yes no not oh ok okay hi hello hey ' +
    'thanks thank please sure well just maybe today tomorrow yesterday tonight now later soon after before since ' +
    'while because although though as at by for from in into of on to with about all any some every each many most ' +
    "much more one first last next great good nice love let let's can could would should will did do does had has " +
    'have is was were are be been am wow yeah yep nope cool awesome amazing congrats congratulations sorry haha lol ' +
    'omg ah aw aww absolutely totally definitely exactly really thats'
  ).split(' '),
);

const CALENDAR = new Set(
  (
    'monday tuesday wednesday thursday friday saturday sunday january february march april may june july august ' +
    'september october november december'
  ).split(' '),
);

const clean = (name: string): string => name.replaceAll('\u0000', '').trim().slice(0, MAX_ENTITY_CHARS);

/** A "Name:" prefix or speaker that reads as a name: one to four capitalised words. */
function speakerName(candidate: string | undefined): string | undefined {
  const name = candidate?.trim();
  if (!name) return undefined;
  const words = name.split(/\s+/u);
  return words.length <= MAX_WORDS && words.every((w) => CAPITALISED.test(w)) ? clean(name) : undefined;
}

/**
 * The names in one run of capitalised words: split at calendar words, without the sentence openers that lead it
 * when it opens a sentence, and never a lone opener ("I", "The").
 */
function namesInRun(run: readonly string[], opensSentence: boolean): string[] {
  const names: string[] = [];
  let part: string[] = [];
  let leading = opensSentence;
  const flush = () => {
    if (part.length > 1 || (part.length === 1 && !OPENERS.has(part[0]!.toLowerCase()))) names.push(part.join(' '));
    part = [];
  };
  for (const word of run) {
    const lower = word.toLowerCase();
    if (CALENDAR.has(lower)) {
      flush();
      leading = false;
    } else if (leading && OPENERS.has(lower)) continue;
    else {
      leading = false;
      part.push(word);
      if (part.length === MAX_WORDS) flush();
    }
  }
  flush();
  return names;
}

function capitalisedNames(text: string): string[] {
  const names: string[] = [];
  let run: string[] = [];
  let runOpensSentence = false;
  let sentenceStart = true;
  const close = () => {
    if (run.length > 0) names.push(...namesInRun(run, runOpensSentence));
    run = [];
  };
  // A line break ends a sentence too (lists, chat lines without a full stop).
  for (const token of text.replaceAll('\n', ' . ').match(TOKEN) ?? []) {
    if (WORDLIKE.test(token) && CAPITALISED.test(token)) {
      if (run.length === 0) runOpensSentence = sentenceStart;
      run.push(token);
      sentenceStart = false;
    } else {
      close();
      if (WORDLIKE.test(token)) sentenceStart = false;
      else if (SENTENCE_END.test(token)) sentenceStart = true;
    }
  }
  close();
  return names;
}

/** The names a memory's text (and its chat metadata) mentions, each once, speaker first. */
export function mentionsOf(text: string, metadata: Readonly<Metadata>): Mention[] {
  const found = new Map<string, Mention>();
  const add = (name: string | undefined, kind: EntityKind) => {
    if (name === undefined || name.length < 2) return;
    const key = name.toLowerCase();
    if (!found.has(key) && found.size < MAX_MENTIONS) found.set(key, { name, kind });
  };
  const prefix = PREFIX.exec(text);
  const given = metadata['speaker'];
  const speaker = speakerName(typeof given === 'string' ? given : undefined) ?? speakerName(prefix?.[1]);
  add(speaker, 'speaker');
  const body = prefix && speakerName(prefix[1]) !== undefined ? text.slice(prefix[0].length) : text;
  for (const name of capitalisedNames(body)) add(clean(name), 'name');
  return [...found.values()];
}
