// A streamed reflect through the gateway with an API key: events pass through as the engine sends them (the first
// delta arrives while the LLM is still writing), the caller leaving reaches the LLM, and the reflects quota counts a
// stream once its done event has passed, never one that ended in an error event or was abandoned. A response_schema
// the engine refuses is its 400, streamed or not, uncounted.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestEngine, type TestEngine } from '../../engine/test/helpers/engine.js';
import { startFakeLlm, type FakeLlm } from '../../engine/test/helpers/fake-llm.js';
import { allEvents, postForEvents, readEvents } from '../../engine/test/helpers/event-stream.js';
import { call, ENGINE_TOKEN, obj, setupProject, startHarness, type Harness } from './helpers.js';

describe('streamed reflect through the gateway', () => {
  let fake: FakeLlm;
  let engine: TestEngine;
  let h: Harness;
  let key: string;
  const reflectPath = '/v1/me/banks/maria/reflect';
  const question = { query: 'What pet does Maria have?' };
  const auth = () => ({ authorization: `Bearer ${key}` });
  const reflectsUsed = async () =>
    obj(obj((await call(h.url, 'GET', '/v1/me/usage', { token: key })).body)['reflects'])['used'];

  before(async () => {
    fake = await startFakeLlm();
    engine = await startTestEngine({
      MNEMOS_API_AUTH_TOKEN: ENGINE_TOKEN,
      MNEMOS_API_LLM_PROVIDER: 'litellm',
      MNEMOS_API_LLM_MODEL: 'fake-model',
      MNEMOS_API_LLM_BASE_URL: fake.openaiBaseUrl,
      MNEMOS_API_LLM_TIMEOUT_MS: '5000',
      MNEMOS_API_LLM_MAX_RETRIES: '1',
    });
    fake.always = { purpose: 'extract', behaviour: { kind: 'content', content: { facts: [] } } };
    h = await startHarness(engine.url);
    ({ key } = await setupProject(h.url));
    const r = await call(h.url, 'POST', '/v1/me/banks/maria/memories', {
      token: key,
      body: { content: 'Maria adopted a grey cat named Pixel, who sleeps on the balcony all afternoon.' },
    });
    assert.equal(r.status, 200, r.text);
  });
  after(async () => {
    await h?.close();
    await engine?.dispose();
    await fake?.stop();
  });

  it('passes events on as they come; the caller leaving closes the LLM request; nothing is counted', async () => {
    const abandonedBefore = fake.streamsAbandoned;
    fake.next({ kind: 'stall-stream', afterChunks: 2 }, 'reflect');
    const caller = new AbortController();
    const response = await postForEvents(`${h.url}${reflectPath}`, question, auth(), caller.signal);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    // The stand-in has stopped mid-answer: a delta can only arrive here if nothing along the way buffers the stream.
    let first: string | undefined;
    try {
      for await (const e of readEvents(response.body!)) {
        first = e.event;
        caller.abort();
      }
    } catch (error) {
      assert.equal((error as Error).name, 'AbortError');
    }
    assert.equal(first, 'delta');
    const deadline = Date.now() + 30_000;
    while (fake.streamsAbandoned === abandonedBefore && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(fake.streamsAbandoned, abandonedBefore + 1, 'the LLM request was closed');
    assert.equal(await reflectsUsed(), 0);
  });

  it('a stream that ends in an error event is not counted', async () => {
    fake.next({ kind: 'cut-stream', afterChunks: 2 }, 'reflect');
    const events = await allEvents(await postForEvents(`${h.url}${reflectPath}`, question, auth()));
    assert.equal(events.at(-1)?.event, 'error');
    assert.equal(obj(events.at(-1)?.data)['code'], 'llm_unavailable');
    assert.equal(await reflectsUsed(), 0);
  });

  it('a complete stream ends with the done event and counts one reflect, as a unary reflect does', async () => {
    const response = await postForEvents(`${h.url}/v1/reflect`, { ...question, bank_id: 'maria' }, auth());
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-quota-metric'), 'reflects');
    const events = await allEvents(response);
    assert.ok(events.filter((e) => e.event === 'delta').length >= 2);
    const done = obj(events.at(-1)?.data);
    assert.equal(events.at(-1)?.event, 'done');
    assert.equal((done['citations'] as unknown[]).length, 1);
    assert.equal(await reflectsUsed(), 1);

    const unary = await call(h.url, 'POST', reflectPath, { token: key, body: question });
    assert.equal(unary.status, 200, unary.text);
    assert.match(unary.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(obj(unary.body)['citations'], done['citations']);
    assert.equal(await reflectsUsed(), 2);
  });

  it("a response_schema the engine refuses is the engine's 400 through the gateway, plain or streamed, not counted", async () => {
    const used = await reflectsUsed();
    const calls = fake.count('reflect');
    for (const response_schema of [{ $ref: '#' }, { $defs: { a: { $ref: '#/$defs/a' } }, $ref: '#/$defs/a' }]) {
      const plain = await call(h.url, 'POST', reflectPath, { token: key, body: { ...question, response_schema } });
      const streamed = await postForEvents(`${h.url}${reflectPath}`, { ...question, response_schema }, auth());
      for (const [r, text] of [
        [plain, plain.text],
        [streamed, await streamed.text()],
      ] as const) {
        assert.equal(r.status, 400, text);
        assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
        const problem = JSON.parse(text) as { code: string; errors: Array<{ pointer: string }> };
        assert.equal(problem.code, 'validation_failed');
        assert.match(problem.errors[0]!.pointer, /^\/response_schema\/(\$defs\/a\/)?\$ref$/);
      }
    }
    assert.equal(fake.count('reflect'), calls, 'no LLM call');
    assert.equal(await reflectsUsed(), used);
  });
});
