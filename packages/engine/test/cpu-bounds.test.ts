// test-runner: alone (it times how fast the server answers; other test files' CPU would blur that)
// No caller input holds the event loop: while a real engine (embedded database, real model) stores a 1 MiB
// single-word text, /health/live keeps answering within 100 ms (above the idle floor of a loaded machine, see
// helpers/liveness.ts). Holding the loop for seconds, as counting tokens of a long word did, fails either way.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';
import { assertLive, idleFloorMs, probeDuring } from './helpers/liveness.js';

let engine: TestEngine;
let floorMs = 0;
const BANK = 'cpu-bounds';
/** The engine's default body limit is 1 MiB; the JSON around the text takes the rest. */
const TEXT_CHARS = 1024 * 1024 - 256;

before(async () => {
  engine = await startTestEngine();
  floorMs = await idleFloorMs(engine.url);
});
after(async () => {
  await engine?.dispose();
});

/** One word of `length` letters with no repeating pattern a tokenizer cache could shortcut. */
function singleWord(length: number, seed: number): string {
  const letters: string[] = [];
  let x = seed;
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    letters.push(String.fromCharCode(97 + (x % 26)));
  }
  return letters.join('');
}

test('a 1 MiB single-word retain keeps /health/live answering, and what it stored is recallable', async () => {
  const word = singleWord(TEXT_CHARS, 7);
  const probe = await probeDuring(
    engine.url,
    call<{ memory_ids: string[] }>(engine.url, 'POST', `/v1/default/banks/${BANK}/memories`, { content: word }),
  );
  assert.equal(probe.result.status, 200, JSON.stringify(probe.result.body).slice(0, 300));
  assertLive(probe, floorMs);

  const ids = probe.result.body.memory_ids;
  assert.ok(ids.length > 1, 'the word is stored in several bounded chunks');
  const first = await call<{ text: string }>(engine.url, 'GET', `/v1/default/banks/${BANK}/memories/${ids[0]}`);
  assert.equal(first.status, 200);
  assert.ok(first.body.text.length > 0 && word.startsWith(first.body.text));

  const recall = await call<{ results: Array<{ id: string; text: string }> }>(
    engine.url,
    'POST',
    `/v1/default/banks/${BANK}/memories/recall`,
    { query: first.body.text, max_tokens: 100_000 },
  );
  assert.equal(recall.status, 200);
  assert.ok(
    recall.body.results.some((r) => r.id === ids[0]),
    'recall finds the first chunk by its text',
  );
});

test('text with special-token markers is stored, not refused', async () => {
  const r = await call<{ memory_ids: string[] }>(engine.url, 'POST', `/v1/default/banks/${BANK}/memories`, {
    content: 'The prompt ended with <|endoftext|> and then <|im_start|>.',
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.memory_ids.length, 1);
});
