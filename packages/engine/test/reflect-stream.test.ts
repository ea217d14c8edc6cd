// Streamed reflect (Accept: text/event-stream) through the real OpenAI and Gemini provider code against the stand-in
// LLM streaming in each wire format: several delta events, then a done event equal to the unary answer; usage counted
// as the unary path counts it; the caller going away aborts the upstream request; a stream cut off upstream ends with
// an error event; failures before the first event are ordinary problem answers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';
import { startFakeLlm, type FakeLlm } from './helpers/fake-llm.js';
import { operationCompleted } from './helpers/operations.js';
import { allEvents, postForEvents, readEvents, type StreamEvent } from './helpers/event-stream.js';

let fake: FakeLlm;
let openai: TestEngine;
let gemini: TestEngine;
const BANK = 'stream-bank';
const QUESTION = { query: 'Where does Maria work and what pet does Maria have?' };

interface Answer {
  text: string;
  citations: string[];
  structured_output?: Record<string, unknown>;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number };
}

const baseEnv = { MNEMOS_API_LLM_TIMEOUT_MS: '5000', MNEMOS_API_LLM_MAX_RETRIES: '1' };

/** Retains the memories and waits for their extraction, whose tokens are counted to the bank as well. */
async function fill(engine: TestEngine): Promise<void> {
  const r = await call<{ operation_id: string }>(engine.url, 'POST', `/v1/default/banks/${BANK}/memories`, {
    items: [
      { content: 'Maria adopted a grey cat named Pixel, who sleeps on the balcony all afternoon.' },
      { content: 'Maria works as a structural engineer in Lyon, designing footbridges over the Rhône.' },
      { content: 'The office coffee machine broke on Monday.' },
    ],
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  await operationCompleted(engine.url, r.body.operation_id);
}

before(async () => {
  fake = await startFakeLlm();
  [openai, gemini] = await Promise.all([
    startTestEngine({
      ...baseEnv,
      MNEMOS_API_LLM_PROVIDER: 'litellm',
      MNEMOS_API_LLM_MODEL: 'fake-model',
      MNEMOS_API_LLM_BASE_URL: fake.openaiBaseUrl,
    }),
    startTestEngine({
      ...baseEnv,
      MNEMOS_API_LLM_PROVIDER: 'gemini',
      MNEMOS_API_LLM_MODEL: 'gemini-fake',
      MNEMOS_API_LLM_API_KEY: 'k',
      MNEMOS_API_LLM_BASE_URL: fake.url,
    }),
  ]);
  // Facts are not needed here: extraction stores nothing, so each bank holds exactly the raw memories.
  fake.always = { purpose: 'extract', behaviour: { kind: 'content', content: { facts: [] } } };
  await Promise.all([fill(openai), fill(gemini)]);
});

after(async () => {
  await Promise.all([openai?.dispose(), gemini?.dispose()]);
  await fake?.stop();
});

const reflectUrl = (engine: TestEngine) => `${engine.url}/v1/default/banks/${BANK}/reflect`;
const usageOf = async (engine: TestEngine) =>
  (await call<{ usage: { total_tokens: number } }>(engine.url, 'GET', `/v1/default/banks/${BANK}/stats`)).body.usage
    .total_tokens;

for (const [format, engineOf] of [
  ['openai', () => openai],
  ['gemini', () => gemini],
] as const) {
  test(`${format} format: delta events, then a done event equal to the unary answer, usage counted alike`, async () => {
    const engine = engineOf();
    const startUsage = await usageOf(engine);
    const unary = await call<Answer>(engine.url, 'POST', `/v1/default/banks/${BANK}/reflect`, QUESTION);
    assert.equal(unary.status, 200, JSON.stringify(unary.body));
    assert.match(unary.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(unary.body.citations.length, 2, 'the stand-in cites the two memories about Maria');
    const afterUnary = await usageOf(engine);
    assert.equal(afterUnary - startUsage, unary.body.usage.total_tokens);

    const response = await postForEvents(reflectUrl(engine), QUESTION);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = await allEvents(response);
    const sent = fake.calls.at(-1)!;
    assert.equal(sent.format, format);
    assert.equal(sent.streamed, true);
    if (format === 'openai') assert.deepEqual(sent.body['stream_options'], { include_usage: true });
    else assert.match(sent.path, /gemini-fake:streamGenerateContent\?alt=sse/);

    const deltas = events.filter((e) => e.event === 'delta');
    const last = events.at(-1)!;
    assert.ok(deltas.length >= 3, `expected several delta events, got ${deltas.length}`);
    assert.deepEqual(
      events.map((e) => e.event),
      [...deltas.map(() => 'delta'), 'done'],
    );
    const done = last.data as Answer;
    assert.equal(deltas.map((e) => (e.data as { text: string }).text).join(''), done.text);
    assert.deepEqual(done, unary.body, 'the done event is the unary answer');
    assert.equal((await usageOf(engine)) - afterUnary, done.usage.total_tokens);
  });
}

test('response_schema streams the answer text and puts the validated structured_output in the done event', async () => {
  const body = {
    ...QUESTION,
    response_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  };
  const events = await allEvents(await postForEvents(reflectUrl(openai), body));
  const done = events.at(-1)!;
  assert.equal(done.event, 'done');
  const answer = done.data as Answer;
  assert.equal(typeof answer.structured_output?.['city'], 'string');
  assert.ok(events.filter((e) => e.event === 'delta').length >= 2);
});

test('the caller going away aborts the upstream LLM request', async () => {
  const abandonedBefore = fake.streamsAbandoned;
  fake.next({ kind: 'stall-stream', afterChunks: 2 }, 'reflect');
  const caller = new AbortController();
  const response = await postForEvents(reflectUrl(openai), QUESTION, {}, caller.signal);
  assert.equal(response.status, 200);
  const seen: StreamEvent[] = [];
  try {
    for await (const e of readEvents(response.body!)) {
      seen.push(e);
      caller.abort();
    }
  } catch (error) {
    assert.equal((error as Error).name, 'AbortError');
  }
  assert.equal(seen[0]?.event, 'delta');
  // The stand-in holds its stream open until the engine closes the connection to it.
  const deadline = Date.now() + 30_000;
  while (fake.streamsAbandoned === abandonedBefore && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  assert.equal(fake.streamsAbandoned, abandonedBefore + 1, 'the upstream connection was closed');
});

test('a stream cut off upstream ends with an error event carrying a problem (the status was already 200)', async () => {
  fake.next({ kind: 'cut-stream', afterChunks: 3 }, 'reflect');
  const response = await postForEvents(reflectUrl(openai), QUESTION);
  assert.equal(response.status, 200);
  const events = await allEvents(response);
  assert.ok(events.filter((e) => e.event === 'delta').length >= 1);
  const last = events.at(-1)!;
  assert.equal(last.event, 'error');
  const problem = last.data as { type: string; title: string; status: number; detail: string; code: string };
  assert.equal(problem.code, 'llm_unavailable');
  assert.equal(problem.status, 503);
  assert.match(problem.type, /llm_unavailable$/);
  assert.ok(problem.title.length > 0 && problem.detail.length > 0);
  assert.equal(events.filter((e) => e.event === 'done').length, 0);
});

test('failures before the first event are ordinary problem answers', async () => {
  fake.next({ kind: 'status', status: 400 }, 'reflect');
  const rejected = await postForEvents(reflectUrl(openai), QUESTION);
  assert.equal(rejected.status, 502);
  assert.match(rejected.headers.get('content-type') ?? '', /^application\/problem\+json/);
  assert.equal(((await rejected.json()) as { code: string }).code, 'llm_rejected');

  const invalid = await postForEvents(reflectUrl(openai), { query: 42 });
  assert.equal(invalid.status, 400);
  assert.equal(((await invalid.json()) as { code: string }).code, 'validation_failed');

  const noBank = await postForEvents(`${openai.url}/v1/reflect`, { query: 'anything' });
  assert.equal(noBank.status, 400);
});

test('/v1/reflect (bank in the body) streams too', async () => {
  const events = await allEvents(await postForEvents(`${openai.url}/v1/reflect`, { ...QUESTION, bank_id: BANK }));
  assert.equal(events.at(-1)!.event, 'done');
  assert.equal((events.at(-1)!.data as Answer).citations.length, 2);
});
