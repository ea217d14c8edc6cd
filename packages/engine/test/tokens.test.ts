// Work on caller text is linear: token counting is exact for ordinary text and an upper bound for very long runs,
// retain chunks are bounded in tokens as well as characters, and the blind index stems no absurdly long word.
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { test } from 'node:test';
import { countTokens as exactCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { documentLexemes, MAX_STEMMED_CHARS, normaliseWord } from '../src/crypto/normalise.js';
import { rng } from '../bench/synthetic.js';
import { blindTsvector } from '../src/crypto/encrypting-codec.js';
import { DataKey } from '../src/crypto/envelope.js';
import { chunkText, MAX_CHUNK_CHARS, MAX_CHUNK_TOKENS, splitByCharacters } from '../src/memory/chunk.js';
import { countTokens, countTokensYielding, MAX_PIECE_BYTES } from '../src/util/tokens.js';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const exact = (text: string) => exactCl100k(text, { disallowedSpecial: new Set() });

const SAMPLES = [
  'Alice went to Paris yesterday.',
  "It's what they'RE saying, isn't it?",
  '  leading and trailing  \n',
  'Numbers 1234567 and 3.14159, dates 2024-01-15T10:30:00Z.',
  '«ça» — naïve café, Größe',
  '日本語のテキストです。',
  'emoji 😀😀 and flags 🇫🇷',
  'tabs\tand\r\nnewlines\n\n\nparagraphs',
  '<|endoftext|> is plain text here',
  'x!!\r\n.\n',
  'a\u00a0b',
  '---- ==== ____',
  '    indented code();\n\treturn 0;',
];

test('ordinary text is counted exactly as cl100k counts it, in any mix and cut', () => {
  let mixed = '';
  for (let i = 0; i < 400; i++) mixed += SAMPLES[(i * 7) % SAMPLES.length]! + (i % 5 === 0 ? '' : ' ');
  for (const sample of SAMPLES) assert.equal(countTokens(sample), exact(sample), JSON.stringify(sample));
  for (let start = 0; start < mixed.length - 300; start += 97) {
    const text = mixed.slice(start, start + 1 + (start % 293));
    assert.equal(countTokens(text), exact(text), JSON.stringify(text));
  }
});

test('text with special-token markers is counted, not refused', () => {
  assert.ok(countTokens('say <|endoftext|> and <|fim_prefix|>') > 5);
});

test('a run longer than the piece bound counts its UTF-8 bytes, never fewer than the tokenizer', () => {
  for (const run of ['a'.repeat(2000), 'ab1'.repeat(10), '-'.repeat(500), ' '.repeat(300) + 'x', 'é'.repeat(400)]) {
    const counted = countTokens(run);
    assert.ok(counted >= exact(run), `${JSON.stringify(run.slice(0, 12))}: ${counted} < ${exact(run)}`);
  }
  const word = 'q'.repeat(MAX_PIECE_BYTES + 1);
  assert.equal(
    countTokens(`Before ${word} after.`),
    countTokens('Before') + MAX_PIECE_BYTES + 2 + countTokens(' after.'),
  );
});

test('a 1 MiB single word and 1 MiB of spaces are counted as their bytes', () => {
  assert.equal(countTokens('z'.repeat(1 << 20)), 1 << 20);
  assert.equal(countTokens(' '.repeat(1 << 20) + 'x'), (1 << 20) - 1 + countTokens(' x'));
});

/** `work`'s result, and how many turns of the event loop other work had while it ran. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let running = true;
  const ticker = (async () => {
    while (running) {
      await nextTurn();
      turns++;
    }
  })();
  const result = await work();
  running = false;
  await ticker;
  return { result, turns };
}

test('the yielding count gives the same numbers and lets other work run meanwhile', async () => {
  const prose = SAMPLES.join(' ').repeat(3000);
  const { result: counts, turns } = await turnsDuring(() => countTokensYielding([prose, 'y'.repeat(1 << 20)]));
  assert.deepEqual(counts, [countTokens(prose), 1 << 20]);
  assert.ok(turns > 1, 'other work ran while counting');
});

/** `count` made-up words of eight letters (none of them known to the tokenizer or the stem cache). */
function madeUpWords(count: number): string {
  const next = rng(1);
  const words: string[] = [];
  for (let i = 0; i < count; i++) {
    let word = '';
    for (let k = 0; k < 8; k++) word += String.fromCharCode(97 + Math.floor(next() * 26));
    words.push(word);
  }
  return words.join(' ');
}

test('the blind index of a long text of new words is built in slices: other work runs meanwhile', async () => {
  const text = madeUpWords(100_000);
  const { key } = DataKey.generate();
  const lexemes = await turnsDuring(() => documentLexemes(text));
  assert.equal(lexemes.result.size, new Set(text.split(' ')).size);
  assert.ok(lexemes.turns > 1, 'other work ran while normalising');
  const index = await turnsDuring(() => blindTsvector(key, text));
  assert.equal(index.result.split(' ').length, lexemes.result.size);
  assert.ok(index.turns > 1, 'other work ran while indexing');
});

test('a long text is cut into sentences after their punctuation, as a lookbehind pattern cuts them', () => {
  const text = 'Yes. No!  Why?\tBecause。それで！本当？ Dots... and "quotes." then e.g. abbreviations.\n'.repeat(200);
  const byLookbehind = text.split(/(?<=[.!?。！？])\s+/);
  const pieces = splitByCharacters(text, MAX_CHUNK_CHARS);
  assert.deepEqual(
    pieces.join('\n').split('\n'),
    byLookbehind.filter((s) => s.trim() !== ''),
  );
});

test('chunks are bounded in tokens as well as characters, and keep every character', async () => {
  const cjk = '日本語のテキストです、これは長い文章になります'.repeat(300);
  const emoji = '😀🇫🇷👩‍👩‍👧'.repeat(500);
  for (const text of [cjk, emoji]) {
    const chunks = await chunkText(text);
    assert.ok(chunks.length > 1);
    for (const chunk of chunks) {
      assert.ok(chunk.text.length <= MAX_CHUNK_CHARS);
      assert.ok(chunk.tokens <= MAX_CHUNK_TOKENS, `a chunk of ${chunk.tokens} tokens`);
      assert.equal(chunk.tokens, countTokens(chunk.text));
      assert.ok(!LONE_SURROGATE.test(chunk.text), 'no surrogate pair is cut in two');
    }
    assert.equal(chunks.map((c) => c.text).join(''), text);
  }
});

test('prose is chunked by characters as before, with its token counts', async () => {
  const prose = 'The memory engine stores what agents learn about people. '.repeat(100);
  const chunks = await chunkText(prose);
  assert.ok(chunks.length > 1);
  for (const chunk of chunks) {
    assert.ok(chunk.text.length <= MAX_CHUNK_CHARS);
    assert.equal(chunk.tokens, exact(chunk.text));
  }
});

// The bound is generous: stemming the 1 MiB word took minutes before long words were left unstemmed, and takes
// milliseconds now.
test(
  'the blind index leaves words too long for English unstemmed, so a 1 MiB word is cheap',
  { timeout: 30_000 },
  async () => {
    assert.equal(normaliseWord('Running'), 'run');
    const long = 'generalizations'.repeat(5);
    assert.ok(long.length > MAX_STEMMED_CHARS);
    assert.equal(normaliseWord(long), long);
    const lexemes = await documentLexemes(`Alice ${'a'.repeat(1 << 20)} running`);
    assert.deepEqual([...lexemes.keys()], ['alic', 'a'.repeat(1 << 20), 'run']);
  },
);
