// Reflect through the gateway with an API key, streamed and unary: events pass through as the engine sends them (the
// first delta arrives while the LLM is still writing), the caller leaving reaches the LLM, and the reflects quota
// counts an answer that reached the caller (a streamed one once a delta or its done event passed), never one that
// ended in an error event or that the caller left before its first byte, on REST and MCP alike. A response_schema the
// engine refuses is its 400, streamed or not, uncounted.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestEngine, type TestEngine } from '../../engine/test/helpers/engine.js';
import { startFakeLlm, type FakeLlm } from '../../engine/test/helpers/fake-llm.js';
import { allEvents, postForEvents, readEvents } from '../../engine/test/helpers/event-stream.js';
import { call, ENGINE_TOKEN, obj, setupProject, startHarness, type Harness } from './helpers.js';

/** Waits for something the servers do next; the time limit only turns a hang into a failure. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    assert.ok(Date.now() < deadline, `waited 30 s for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('reflect through the gateway', () => {
  let fake: FakeLlm;
  let engine: TestEngine;
  let h: Harness;
  let key: string;
  const reflectPath = '/v1/me/banks/maria/reflect';
  const question = { query: 'What pet does Maria have?' };
  const auth = () => ({ authorization: `Bearer ${key}` });
  const reflectsUsed = async () =>
    Number(obj(obj((await call(h.url, 'GET', '/v1/me/usage', { token: key })).body)['reflects'])['used']);
  /** Waits until the gateway has counted or given back the units of every request it was serving. */
  const settled = (): Promise<void> => until(() => h.gw.quotaUnitsInFlight() === 0, 'the quota to settle');
  const mcpReflect = (signal?: AbortSignal): Promise<Response> =>
    fetch(`${h.url}/mcp`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'reflect', arguments: { bank_id: 'maria', ...question } },
      }),
      ...(signal ? { signal } : {}),
    });

  /**
   * Sends a reflect while the LLM holds its answer, leaves once the LLM has the question (so the gateway has reserved
   * and forwarded it, and nothing has come back), and answers how many reflects that cost.
   */
  async function leftBeforeFirstByte(send: (signal: AbortSignal) => Promise<Response>): Promise<number> {
    const usedBefore = await reflectsUsed();
    let release: () => void = () => undefined;
    fake.next({ kind: 'held', until: new Promise<void>((resolve) => (release = resolve)) }, 'reflect');
    const asked = fake.count('reflect');
    const caller = new AbortController();
    const outcome = send(caller.signal).then(
      (response) => `answered ${response.status}`,
      (error: unknown) => (error instanceof Error ? error.name : String(error)),
    );
    await until(() => fake.count('reflect') > asked, 'the LLM to be asked');
    caller.abort();
    assert.equal(await outcome, 'AbortError', 'nothing came back before the caller left');
    await settled();
    release();
    return (await reflectsUsed()) - usedBefore;
  }

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

  it('passes events on as they come; the caller leaving closes the LLM request; a delta received is charged', async () => {
    const usedBefore = await reflectsUsed();
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
    await until(() => fake.streamsAbandoned > abandonedBefore, 'the LLM request to be closed');
    await settled();
    assert.equal(await reflectsUsed(), usedBefore + 1);
  });

  it('a unary reflect the caller leaves before the first byte is not charged', async () => {
    const unary = (signal: AbortSignal): Promise<Response> =>
      fetch(`${h.url}${reflectPath}`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json' },
        body: JSON.stringify(question),
        signal,
      });
    assert.equal(await leftBeforeFirstByte(unary), 0);
  });

  it('a streamed reflect the caller leaves before the first byte is not charged', async () => {
    const stream = (signal: AbortSignal): Promise<Response> =>
      postForEvents(`${h.url}${reflectPath}`, question, auth(), signal);
    assert.equal(await leftBeforeFirstByte(stream), 0);
  });

  it('an MCP reflect the caller leaves before its answer is not charged; an answered one is', async () => {
    assert.equal(await leftBeforeFirstByte(mcpReflect), 0);
    const usedBefore = await reflectsUsed();
    const answered = await mcpReflect();
    assert.equal(answered.status, 200);
    const result = obj(obj(await answered.json())['result']);
    assert.notEqual(result['isError'], true, JSON.stringify(result));
    await settled();
    assert.equal(await reflectsUsed(), usedBefore + 1);
  });

  it('a stream that ends in an error event is not counted', async () => {
    const usedBefore = await reflectsUsed();
    fake.next({ kind: 'cut-stream', afterChunks: 2 }, 'reflect');
    const events = await allEvents(await postForEvents(`${h.url}${reflectPath}`, question, auth()));
    assert.equal(events.at(-1)?.event, 'error');
    assert.equal(obj(events.at(-1)?.data)['code'], 'llm_unavailable');
    await settled();
    assert.equal(await reflectsUsed(), usedBefore);
  });

  it('a complete stream ends with the done event and counts one reflect, as a unary reflect does', async () => {
    const usedBefore = await reflectsUsed();
    const response = await postForEvents(`${h.url}/v1/reflect`, { ...question, bank_id: 'maria' }, auth());
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-quota-metric'), 'reflects');
    const events = await allEvents(response);
    assert.ok(events.filter((e) => e.event === 'delta').length >= 2);
    const done = obj(events.at(-1)?.data);
    assert.equal(events.at(-1)?.event, 'done');
    assert.equal((done['citations'] as unknown[]).length, 1);
    await settled();
    assert.equal(await reflectsUsed(), usedBefore + 1);

    const unary = await call(h.url, 'POST', reflectPath, { token: key, body: question });
    assert.equal(unary.status, 200, unary.text);
    assert.match(unary.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(obj(unary.body)['citations'], done['citations']);
    await settled();
    assert.equal(await reflectsUsed(), usedBefore + 2);
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
    await settled();
    assert.equal(await reflectsUsed(), used);
  });
});
