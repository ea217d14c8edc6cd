// Retries, timeouts and aborts of @mnemos/client against a scripted local HTTP server (real HTTP on 127.0.0.1).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { Mnemos, MnemosError, parseRetryAfter } from '@mnemos/client';

interface Scripted {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Never answers (a stalled server): the only way out is the client's timeout or abort. */
  hang?: true;
}

let server: Server;
let baseUrl = '';
let script: Scripted[] = [];
let seen: Array<{ method: string; url: string; authorization: string | undefined; body: string }> = [];
let answered: Array<() => void> = [];

/** Resolves once the server has received a request and, unless it hangs, sent its answer. */
const nextHandled = (): Promise<void> => new Promise((resolve) => answered.push(resolve));

const problem = (status: number, code: string, detail: string) => ({
  type: `https://mnemos.dev/problems/${code}`,
  title: 'x',
  status,
  code,
  detail,
});
const ok = { success: true, bank_id: 'b', items_count: 1, memory_ids: ['m1'], async: false };

before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization, body });
      const next = script.shift() ?? {
        status: 500,
        body: problem(500, 'script_exhausted', 'No scripted answer left.'),
      };
      if (!next.hang) {
        const text = typeof next.body === 'string' ? next.body : JSON.stringify(next.body ?? {});
        res.writeHead(next.status, { 'content-type': 'application/json', ...(next.headers ?? {}) }).end(text);
      }
      answered.splice(0).forEach((resolve) => resolve());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function reset(answers: Scripted[]): void {
  script = answers;
  seen = [];
  answered = [];
}

const client = (extra: Partial<ConstructorParameters<typeof Mnemos>[0]> = {}) =>
  new Mnemos({ baseUrl, backoffBaseMs: 1, backoffMaxMs: 5, ...extra });

test('429 with Retry-After, then 200: the call succeeds after one retry', async () => {
  reset([
    { status: 429, headers: { 'retry-after': '0' }, body: problem(429, 'rate_limited', 'Slow down.') },
    { status: 200, body: ok },
  ]);
  const out = await client().retain('b', 'hello');
  assert.deepEqual(out.memory_ids, ['m1']);
  assert.equal(seen.length, 2);
  assert.equal(seen[0]!.body, seen[1]!.body, 'the retry sends the same body');
});

test('503 then 200 is retried with backoff when no Retry-After is given', async () => {
  reset([
    { status: 503, body: problem(503, 'warming_up', 'The model is loading.') },
    { status: 503, body: 'Service Unavailable' },
    { status: 200, body: ok },
  ]);
  const out = await client().retain('b', 'hello');
  assert.equal(out.success, true);
  assert.equal(seen.length, 3);
});

test('gives up after maxRetries and throws the last error', async () => {
  reset(
    [0, 1, 2].map(() => ({
      status: 429,
      headers: { 'retry-after': '0' },
      body: problem(429, 'rate_limited', 'Too many requests for this key.'),
    })),
  );
  await assert.rejects(
    client({ maxRetries: 2 }).recall('b', 'q'),
    (e: unknown) => e instanceof MnemosError && e.status === 429 && e.code === 'rate_limited' && e.retryAfter === 0,
  );
  assert.equal(seen.length, 3);
});

test('quota_exceeded and llm_not_configured are not retried; a Retry-After beyond maxRetryDelayMs is not waited for', async () => {
  reset([
    {
      status: 429,
      headers: { 'retry-after': '3600' },
      body: problem(429, 'quota_exceeded', 'Monthly recall quota used up.'),
    },
  ]);
  await assert.rejects(
    client().recall('b', 'q'),
    (e: unknown) => e instanceof MnemosError && e.code === 'quota_exceeded' && e.retryAfter === 3600,
  );
  assert.equal(seen.length, 1);
  reset([{ status: 503, body: problem(503, 'llm_not_configured', 'No LLM.') }]);
  await assert.rejects(
    client().reflect('b', 'q'),
    (e: unknown) => e instanceof MnemosError && e.code === 'llm_not_configured',
  );
  assert.equal(seen.length, 1);
  reset([{ status: 429, headers: { 'retry-after': '120' }, body: problem(429, 'rate_limited', 'Slow down.') }]);
  await assert.rejects(
    client({ maxRetryDelayMs: 1000 }).recall('b', 'q'),
    (e: unknown) => e instanceof MnemosError && e.code === 'rate_limited',
  );
  assert.equal(seen.length, 1);
});

test('non-problem error bodies still give a status, a code and a detail', async () => {
  reset([{ status: 502, body: '<html>Bad Gateway</html>' }]);
  await assert.rejects(
    client().listBanks(),
    (e: unknown) =>
      e instanceof MnemosError && e.status === 502 && e.code === 'bad_gateway' && e.detail.includes('Bad Gateway'),
  );
  reset([{ status: 400, body: { error: { message: 'Nope.', code: 'custom' } } }]);
  await assert.rejects(
    client().listBanks(),
    (e: unknown) => e instanceof MnemosError && e.code === 'custom' && e.detail === 'Nope.',
  );
});

test('sends the API key, targets /v1/me, encodes bank ids and passes query parameters', async () => {
  reset([
    { status: 200, body: { items: [], total: 0, limit: 5, offset: 0 } },
    {
      status: 200,
      body: {
        period: '2025-01',
        memories: { used: 1, limit: 1000 },
        recalls: { used: 0, limit: 5000 },
        reflects: { used: 0, limit: 100 },
      },
    },
  ]);
  const keyed = client({ apiKey: 'mnm_live_secret', space: 'acme' });
  await keyed.listMemories('alice@example.com', { limit: 5, tags: ['a', 'b'] });
  const usage = await keyed.usage();
  assert.equal(usage.memories.limit, 1000);
  assert.equal(seen[0]!.authorization, 'Bearer mnm_live_secret');
  assert.equal(seen[0]!.url, '/v1/me/banks/alice%40example.com/memories?limit=5&tags=a&tags=b&space=acme');
  assert.equal(seen[1]!.url, '/v1/me/usage');
  assert.equal(seen[1]!.method, 'GET');
});

test('timeouts give code "timeout" and are not retried', async () => {
  // The server never answers, so the timeout is the only outcome whatever the load; its length only has to cover
  // the request reaching a local server. A retry would be a second request before the call gives up.
  reset([
    { status: 200, body: ok, hang: true },
    { status: 200, body: ok, hang: true },
  ]);
  await assert.rejects(
    client({ timeoutMs: 2000 }).retain('b', 'x'),
    (e: unknown) => e instanceof MnemosError && e.code === 'timeout' && e.status === 0,
  );
  assert.equal(seen.length, 1);
});

test('an AbortSignal cancels the call, including a retry wait', async () => {
  // Each abort comes once the server has the request (and, in the second case, has answered it): no clock involved.
  reset([{ status: 200, body: ok, hang: true }]);
  const controller = new AbortController();
  const stalled = client().retain('b', 'x', { signal: controller.signal });
  await nextHandled();
  controller.abort();
  await assert.rejects(stalled, (e: unknown) => e instanceof MnemosError && e.code === 'aborted');

  reset([{ status: 503, headers: { 'retry-after': '30' }, body: problem(503, 'busy', 'Busy.') }]);
  const second = new AbortController();
  const pending = client().recall('b', 'q', { signal: second.signal });
  await nextHandled();
  second.abort();
  await assert.rejects(pending, (e: unknown) => e instanceof MnemosError && e.code === 'aborted');
  assert.equal(seen.length, 1);
  await assert.rejects(
    client().recall('b', 'q', { signal: AbortSignal.abort() }),
    (e: unknown) => e instanceof MnemosError && e.code === 'aborted',
  );
});

test('connection failures give code "connection_error" after retries', async () => {
  const closed = new Mnemos({ baseUrl: 'http://127.0.0.1:9', maxRetries: 1, backoffBaseMs: 1, backoffMaxMs: 2 });
  await assert.rejects(
    closed.listBanks(),
    (e: unknown) => e instanceof MnemosError && e.code === 'connection_error' && e.status === 0,
  );
});

test('parseRetryAfter reads seconds and HTTP dates', () => {
  assert.equal(parseRetryAfter('5'), 5);
  assert.equal(parseRetryAfter(null), undefined);
  assert.equal(parseRetryAfter('soon'), undefined);
  const now = Date.parse('2025-01-01T00:00:00Z');
  assert.equal(parseRetryAfter('Wed, 01 Jan 2025 00:00:10 GMT', now), 10);
  assert.equal(parseRetryAfter('Tue, 31 Dec 2024 00:00:00 GMT', now), 0);
});
