// The LLM transport thread: it holds the cap of calls in flight, keeps prepared requests queued, and sends the next
// one the moment a slot frees, even while the engine's main thread is busy; queued requests can be cancelled, and
// each attempt's timeout counts from the moment the request leaves.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { Registry } from 'prom-client';
import { loadEngineConfig } from '../src/config/load.js';
import { createProvider, LlmClient } from '../src/llm/client.js';
import { LlmTransport } from '../src/llm/transport.js';
import { startFakeLlm } from './helpers/fake-llm.js';

/** An HTTP server in its own thread (so it answers while this thread is blocked): echoes after `?delay=` ms. */
const SERVER = `
const { createServer } = require('node:http');
const { parentPort } = require('node:worker_threads');
const calls = [];
const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    calls.push({ name: url.searchParams.get('name'), at: performance.timeOrigin + performance.now() });
    setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain', 'x-name': url.searchParams.get('name') }).end(body), Number(url.searchParams.get('delay') ?? 0));
  });
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (m) => {
  if (m === 'calls') parentPort.postMessage({ calls });
  if (m === 'close') server.close(() => process.exit(0));
});
`;

const server = new Worker(SERVER, { eval: true });
const ready = new Promise<number>((r) => server.once('message', (m: { port: number }) => r(m.port)));
const serverCalls = () => {
  server.postMessage('calls');
  return new Promise<Array<{ name: string; at: number }>>((r) =>
    server.once('message', (m: { calls: Array<{ name: string; at: number }> }) => r(m.calls)),
  );
};
const transports: LlmTransport[] = [];
after(async () => {
  for (const t of transports) await t.close();
  const exited = new Promise((r) => server.once('exit', r));
  server.postMessage('close');
  await exited;
});

function transport(limit: number): LlmTransport {
  const t = new LlmTransport(limit);
  transports.push(t);
  return t;
}

const url = async (name: string, delay: number) => `http://127.0.0.1:${await ready}/?name=${name}&delay=${delay}`;

test('requests and answers cross the thread intact (method, headers, body, status)', async () => {
  const t = transport(2);
  const r = await t.fetch(await url('echo', 0), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"a":"é"}',
  });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-name'), 'echo');
  assert.equal(await r.text(), '{"a":"é"}');
  assert.equal(t.outstanding, 0);
});

test('a queued request leaves as soon as a slot frees, while this thread is still busy', async () => {
  const t = transport(1);
  const sent: string[] = [];
  const first = t.fetch(await url('first', 50), { method: 'POST', body: 'x' }, { onSent: () => sent.push('first') });
  const second = t.fetch(await url('second', 0), { method: 'POST', body: 'y' }, { onSent: () => sent.push('second') });
  // Wait until the first one is out, then hold this thread (as a long database or embedding step would) well past the
  // first answer.
  while (sent.length === 0) await new Promise((r) => setTimeout(r, 5));
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3000);
  const unblocked = performance.timeOrigin + performance.now();
  await Promise.all([first, second]);
  const calls = await serverCalls();
  const secondAt = calls.find((c) => c.name === 'second')?.at;
  assert.ok(
    secondAt !== undefined && secondAt < unblocked,
    'the second request reached the server before this thread was free again',
  );
  assert.deepEqual(sent, ['first', 'second']);
});

test('a queued request can be cancelled and never reaches the server; an in-flight one is aborted', async () => {
  const t = transport(1);
  const slow = new AbortController();
  const queued = new AbortController();
  const inFlight = t.fetch(await url('slow', 5000), { method: 'POST', body: 'x', signal: slow.signal });
  const waiting = t.fetch(await url('never', 0), { method: 'POST', body: 'y', signal: queued.signal });
  queued.abort();
  await assert.rejects(waiting, (e: unknown) => (e as Error).name === 'AbortError');
  slow.abort();
  await assert.rejects(inFlight, (e: unknown) => (e as Error).name === 'AbortError');
  assert.equal((await serverCalls()).filter((c) => c.name === 'never').length, 0);
  assert.equal(t.outstanding, 0);
});

test("an attempt's timeout counts from the moment it leaves, not while it waits its turn", async () => {
  const t = transport(1);
  // Six requests of 400 ms each, one at a time: the last waits about 2 s, longer than the 1.5 s timeout, while each
  // answer comes well within it (1.1 s to spare for a loaded machine).
  const all = await Promise.all(
    Array.from({ length: 6 }, async (_, i) =>
      t.fetch(await url(`t${i}`, 400), { method: 'POST', body: String(i) }, { timeoutMs: 1500 }),
    ),
  );
  assert.deepEqual(await Promise.all(all.map((r) => r.text())), ['0', '1', '2', '3', '4', '5']);
  // One that does take longer than its timeout fails as a timeout.
  await assert.rejects(
    t.fetch(await url('late', 2000), { method: 'POST', body: 'z' }, { timeoutMs: 100 }),
    (e: unknown) => (e as Error).name === 'TimeoutError',
  );
});

test('through the provider: the cap holds with twice as many calls admitted', async () => {
  const fake = await startFakeLlm();
  try {
    const config = loadEngineConfig({
      MNEMOS_HOME: '/tmp/unused',
      MNEMOS_API_LLM_PROVIDER: 'openai',
      MNEMOS_API_LLM_MODEL: 'm',
      MNEMOS_API_LLM_API_KEY: 'k',
      MNEMOS_API_LLM_BASE_URL: fake.openaiBaseUrl,
    }).llm;
    assert.ok(config);
    const client = new LlmClient(createProvider(config, undefined, transport(3)), 6, new Registry());
    fake.maxInFlight = 0;
    fake.delayMs = 50;
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        client.structured({
          purpose: 'extract',
          system: 's',
          user: `Extract.\nINPUT:\n${JSON.stringify({ recorded_at: '2024-06-10T12:00:00Z', text: `Yuri owns ${i} boats.`, existing_facts: [] })}`,
          schema: {},
          schemaName: 'facts',
          validate: (v: unknown) => ({ ok: true as const, value: v }),
        }),
      ),
    );
    assert.equal(results.length, 12);
    assert.equal(fake.maxInFlight, 3);
  } finally {
    await fake.stop();
  }
});
