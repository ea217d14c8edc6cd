// test-runner: alone (it reads how long the engine's event loop waited; other test files' CPU would add to that)
// One request never stalls the others: while an engine process (embedded database, real model, encryption at rest)
// retains and edits texts of up to 1 MiB, another tenant's recalls keep being answered and the engine's own
// `mnemos_nodejs_eventloop_lag_max_seconds` stays under 50 ms.
//
// The engine runs in its own process, so the lag it reports is its own work and not this client's. On a machine whose
// cores are busy with other processes, the lag also holds time the engine waited for a core; idle probe processes
// (helpers/loop-lag.ts) measures that wait over the same stretch, and the bound allows it on top of the 50 ms.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, tempHome, testEnv } from './helpers/engine.js';
import { engineLagMaxMs, SAMPLING_MS, startLagProbes, type LagProbe } from './helpers/loop-lag.js';
import { spawnEngine, type EngineProcess } from './helpers/process.js';

/** The promise: no request holds the engine's event loop longer than this. */
const MAX_LAG_MS = 50;

const TOKEN = 'event-loop-lag-test-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const KEY = Buffer.alloc(32, 7).toString('base64');
/** The engine's default body limit is 1 MiB; the JSON around the text takes the rest. */
const TEXT_CHARS = 1024 * 1024 - 256;
const WRITER = '/v1/writer/banks/large';
const READER = '/v1/reader/banks/notes';

const home = tempHome('mnemos-lag-');
let engine: EngineProcess;
let probe: LagProbe;

before(async () => {
  engine = await spawnEngine(
    testEnv(home.path, { MNEMOS_API_AUTH_TOKEN: TOKEN, MNEMOS_API_ENCRYPTION_MASTER_KEY: KEY }),
  );
  probe = await startLagProbes();
});
after(async () => {
  probe?.stop();
  await engine?.stop();
  home.remove();
});

/** Pseudo-random lowercase letters from a linear congruential sequence, and the state to continue it from. */
function letters(count: number, seed: number): { text: string; seed: number } {
  const out: string[] = [];
  let x = seed;
  for (let i = 0; i < count; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out.push(String.fromCharCode(97 + ((x >> 8) % 26)));
  }
  return { text: out.join(''), seed: x };
}

/** One word of `length` letters: a 1,200-letter stretch repeated, so its pieces are two memories (two embeddings). */
function singleWord(length: number): string {
  return letters(1200, 3)
    .text.repeat(Math.ceil(length / 1200))
    .slice(0, length);
}

/**
 * Made-up words of eight letters, `length` characters in all: each one a new term for the blind index to stem and key,
 * and slow for the token counter, which knows none of them.
 */
function distinctWords(length: number, seed: number): string {
  const words: string[] = [];
  let next = seed;
  for (let size = 0; size < length; size += 9) {
    const word = letters(8, next);
    next = word.seed;
    words.push(word.text);
  }
  return words.join(' ').slice(0, length).trim();
}

/** Recalls in another tenant, one after another, until stopped. */
function recallLoop() {
  let running = true;
  const seen = { recalls: 0, slowestMs: 0, failures: [] as string[] };
  const done = (async () => {
    while (running) {
      const started = performance.now();
      const r = await call(engine.url, 'POST', `${READER}/memories/recall`, { query: 'support group' }, AUTH);
      seen.slowestMs = Math.max(seen.slowestMs, performance.now() - started);
      seen.recalls++;
      if (r.status !== 200) seen.failures.push(`${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      await sleep(20);
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      return seen;
    },
  };
}

interface Step {
  what: string;
  engineMs: number;
  probeMs: number;
}

/** Runs `work`, then reads the engine's lag and the probes' since the previous reading. */
async function step<T>(steps: Step[], what: string, work: () => Promise<T>): Promise<T> {
  const result = await work();
  const [engineMs, probeMs] = await Promise.all([engineLagMaxMs(engine.url), probe.read()]);
  steps.push({ what, engineMs, probeMs });
  return result;
}

test('one request never stalls the others: 1 MiB retains and PATCHes keep the event-loop lag under 50 ms', async () => {
  const word = singleWord(TEXT_CHARS);
  const words = distinctWords(32 * 1024, 1);
  const newText = distinctWords(TEXT_CHARS, 2);

  // Another tenant's bank to recall from, and the memory the PATCH rewrites; both paths run once before timing.
  const note = { content: 'Caroline went to a support group.' };
  assert.equal((await call(engine.url, 'POST', `${READER}/memories`, note, AUTH)).status, 200);
  const short = { content: 'A short memory that is about to be replaced.' };
  const created = await call<{ memory_ids: string[] }>(engine.url, 'POST', `${WRITER}/memories`, short, AUTH);
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const id = created.body.memory_ids[0]!;
  const warm = await call(engine.url, 'PATCH', `${WRITER}/memories/${id}`, { text: 'A warm-up edit.' }, AUTH);
  assert.equal(warm.status, 200, JSON.stringify(warm.body));

  const steps: Step[] = [];
  await step(steps, 'before', async () => undefined);
  const reader = recallLoop();
  const retainWord = () =>
    call<{ memory_ids: string[] }>(engine.url, 'POST', `${WRITER}/memories`, { content: word }, AUTH);
  const wordAnswer = await step(steps, 'retain of a 1 MiB word', retainWord);
  const retainWords = () =>
    call<{ memory_ids: string[] }>(engine.url, 'POST', `${WRITER}/memories`, { content: words }, AUTH);
  const wordsAnswer = await step(steps, 'retain of 32 KiB of made-up words', retainWords);
  const patch = () => call<{ text: string }>(engine.url, 'PATCH', `${WRITER}/memories/${id}`, { text: newText }, AUTH);
  const patched = await step(steps, 'PATCH with 1 MiB of made-up words', patch);
  const seen = await reader.stop();

  const figures = steps
    .slice(1)
    .map((s) => `${s.what}: ${s.engineMs.toFixed(0)} ms (probes ${s.probeMs.toFixed(0)} ms)`);
  console.log(
    `event-loop lag max, ${figures.join('; ')}; ${seen.recalls} recalls, slowest ${seen.slowestMs.toFixed(0)} ms`,
  );

  assert.equal(wordAnswer.status, 200, JSON.stringify(wordAnswer.body).slice(0, 300));
  assert.equal(new Set(wordAnswer.body.memory_ids).size, 2, 'the word is stored as its two distinct pieces');
  assert.equal(wordsAnswer.status, 200, JSON.stringify(wordsAnswer.body).slice(0, 300));
  assert.ok(wordsAnswer.body.memory_ids.length >= 25, 'the words are stored in pieces');
  assert.equal(patched.status, 200, JSON.stringify(patched.body).slice(0, 300));
  assert.equal(patched.body.text, newText);
  assert.deepEqual(seen.failures, [], 'every recall of the other tenant is answered');
  assert.ok(seen.recalls >= 3, `only ${seen.recalls} recalls ran during the work`);

  for (const { what, engineMs, probeMs } of steps.slice(1)) {
    const bound = MAX_LAG_MS + Math.max(0, probeMs - SAMPLING_MS);
    assert.ok(
      engineMs < bound,
      `${what}: the event loop waited ${engineMs.toFixed(0)} ms (bound ${bound.toFixed(0)} ms)`,
    );
  }
});
