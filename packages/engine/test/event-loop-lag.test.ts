// test-runner: alone (it reads how long the engine's event loop waited; other test files' CPU would add to that)
// One request never stalls the others: while an engine process (embedded database, real model, encryption at rest)
// retains and edits texts of up to 1 MiB, another tenant's recalls keep being answered and the engine's own
// `mnemos_nodejs_eventloop_lag_max_seconds` stays under 50 ms.
//
// The engine runs in its own process, so the lag it reports is its own work and not this client's. On a machine whose
// cores are busy with other processes, the lag also holds time the engine waited for a core; idle probe processes
// (helpers/loop-lag.ts) measure that wait over the same stretch, and the bound allows it on top of the 50 ms. The
// requests run in two rounds, and each kind must keep the bound in at least one (see ROUNDS).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { rng } from '../bench/synthetic.js';
import { call, tempHome, testEnv } from './helpers/engine.js';
import { engineLagMaxMs, SAMPLING_MS, startLagProbes, type LagProbe } from './helpers/loop-lag.js';
import { spawnEngine, type EngineProcess } from './helpers/process.js';

/** The promise: no request holds the engine's event loop longer than this. */
const MAX_LAG_MS = 50;
/**
 * Every step runs this many times, with new texts, and must keep the promise in at least one: a step that holds the
 * loop does so every time, while a wait for a core that the probes happened not to meet is rare and seldom repeats.
 */
const ROUNDS = 2;

const TOKEN = 'event-loop-lag-test-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const KEY = Buffer.alloc(32, 7).toString('base64');
/** The engine's default body limit is 1 MiB; the JSON around the text takes the rest. */
const TEXT_CHARS = 1024 * 1024 - 256;
/** Different words in the PATCH's text (see madeUpWords). */
const PATCH_VOCABULARY = 16_000;
/** A body this large is read in turns of its own (@mnemos/http-input); the warm-up requests are that large. */
const LARGE_CHARS = 64 * 1024;
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

/** `count` pseudo-random lowercase letters drawn from `next`. */
function letters(count: number, next: () => number): string {
  let out = '';
  for (let i = 0; i < count; i++) out += String.fromCharCode(97 + Math.floor(next() * 26));
  return out;
}

/** One word of `length` letters: a 1,200-letter stretch repeated, so its pieces are two memories (two embeddings). */
function singleWord(length: number, seed: number): string {
  return letters(1200, rng(seed))
    .repeat(Math.ceil(length / 1200))
    .slice(0, length);
}

/**
 * Made-up words of eight letters, `length` characters in all: new terms for the blind index to stem and key, and slow
 * for the token counter, which knows none of them. At most `vocabulary` different words: the blind index of a text
 * must stay within what a tsvector holds (1 MiB), and about 16,000 keyed terms with their positions fill 700 KiB.
 */
function madeUpWords(length: number, seed: number, vocabulary = Infinity): string {
  const next = rng(seed);
  const known: string[] = [];
  const words: string[] = [];
  for (let size = 0; size < length; size += 9) {
    if (known.length < vocabulary) known.push(letters(8, next));
    words.push(known.length < vocabulary ? known.at(-1)! : known[Math.floor(next() * known.length)]!);
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

/** Whether a step kept the promise: under 50 ms beyond what the probes waited for a core (past one sampling interval). */
const kept = (s: Step) => s.engineMs < MAX_LAG_MS + Math.max(0, s.probeMs - SAMPLING_MS);

/** Runs `work`, then reads the engine's lag and the probes' since the previous reading. */
async function step<T>(steps: Step[], what: string, work: () => Promise<T>): Promise<T> {
  const result = await work();
  const [engineMs, probeMs] = await Promise.all([engineLagMaxMs(engine.url), probe.read()]);
  steps.push({ what, engineMs, probeMs });
  return result;
}

type Ids = { memory_ids: string[] };

/** One round of large requests, with texts of its own (so nothing is already stored); checks what each one did. */
async function largeRequests(round: number, id: string): Promise<Step[]> {
  const word = singleWord(TEXT_CHARS, round + 3);
  const words = madeUpWords(24 * 1024, 10 * round + 1);
  const text = madeUpWords(TEXT_CHARS, 10 * round + 2, PATCH_VOCABULARY);
  const steps: Step[] = [];
  await step(steps, 'before', async () => undefined);

  const retainWord = () => call<Ids>(engine.url, 'POST', `${WRITER}/memories`, { content: word }, AUTH);
  const wordAnswer = await step(steps, 'retain of a 1 MiB word', retainWord);
  assert.equal(wordAnswer.status, 200, JSON.stringify(wordAnswer.body).slice(0, 300));
  assert.equal(new Set(wordAnswer.body.memory_ids).size, 2, 'the word is stored as its two distinct pieces');

  const retainWords = () => call<Ids>(engine.url, 'POST', `${WRITER}/memories`, { content: words }, AUTH);
  const wordsAnswer = await step(steps, 'retain of 24 KiB of made-up words', retainWords);
  assert.equal(wordsAnswer.status, 200, JSON.stringify(wordsAnswer.body).slice(0, 300));
  assert.ok(wordsAnswer.body.memory_ids.length >= 20, 'the words are stored in pieces');

  // An edit holds one memory, so 1 MiB of text is refused; its body is still read, parsed and checked first.
  const patch = () => call<{ code: string }>(engine.url, 'PATCH', `${WRITER}/memories/${id}`, { text }, AUTH);
  const patched = await step(steps, 'PATCH with 1 MiB of made-up words', patch);
  assert.equal(patched.status, 400, JSON.stringify(patched.body).slice(0, 300));
  assert.equal(patched.body.code, 'validation_failed');
  return steps.slice(1);
}

test('one request never stalls the others: 1 MiB retains and PATCHes keep the event-loop lag under 50 ms', async () => {
  // Another tenant's bank to recall from, and the memory the PATCHes rewrite. Both paths first run once on large
  // bodies untimed, so that compiling their code is not counted as a request holding the loop.
  const note = { content: 'Caroline went to a support group.' };
  assert.equal((await call(engine.url, 'POST', `${READER}/memories`, note, AUTH)).status, 200);
  const warmText = madeUpWords(LARGE_CHARS, 99);
  const created = await call<Ids>(engine.url, 'POST', `${WRITER}/memories`, { content: warmText }, AUTH);
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const id = created.body.memory_ids[0]!;
  const warm = await call(engine.url, 'PATCH', `${WRITER}/memories/${id}`, { text: warmText.slice(1) }, AUTH);
  assert.equal(warm.status, 400, JSON.stringify(warm.body));

  const reader = recallLoop();
  const rounds: Step[][] = [];
  for (let round = 0; round < ROUNDS; round++) rounds.push(await largeRequests(round, id));
  const seen = await reader.stop();

  const figures = rounds[0]!.map(({ what }, i) => {
    const tries = rounds.map((r) => `${r[i]!.engineMs.toFixed(0)} ms (probes ${r[i]!.probeMs.toFixed(0)} ms)`);
    return `${what}: ${tries.join(', ')}`;
  });
  console.log(`event-loop lag max per round, ${figures.join('; ')}; ${seen.recalls} recalls meanwhile`);
  assert.deepEqual(seen.failures, [], 'every recall of the other tenant is answered');
  assert.ok(seen.recalls >= 3, `only ${seen.recalls} recalls ran during the work`);
  rounds[0]!.forEach(({ what }, i) => {
    assert.ok(
      rounds.some((r) => kept(r[i]!)),
      `${what}: the event loop waited longer than ${MAX_LAG_MS} ms beyond the probes in every round (${figures[i]})`,
    );
  });
});
