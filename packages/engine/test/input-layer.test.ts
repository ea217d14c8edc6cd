import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';
import { uploadOversized } from './helpers/oversized-upload.js';

/**
 * The shared input layer: bounded query integers, NUL and lone surrogates refused everywhere, a JSON depth cap,
 * framework errors as problem+json (405 with Allow, 415, bad percent-encoding), body-less requests with a JSON
 * content type, and the tenant check.
 */

let engine: TestEngine;
let memoryId: string;

before(async () => {
  engine = await startTestEngine();
  const r = await call<{ memory_ids: string[] }>(engine.url, 'POST', '/v1/default/banks/known/memories', {
    content: 'Ada keeps a baseline memory so the bank exists.',
  });
  memoryId = r.body.memory_ids[0]!;
});
after(async () => {
  await engine?.dispose();
});

interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: Array<{ pointer: string; detail: string }>;
}

async function counts(): Promise<string> {
  const rows = await engine.engine.db.query<{ m: number; b: number }>(
    'SELECT (SELECT count(*)::int FROM memories) AS m, (SELECT count(*)::int FROM banks) AS b',
  );
  return JSON.stringify(rows[0]);
}

/** Sends a request with an exact raw path and body (fetch would normalise both). */
function raw(method: string, path: string, body?: string, headers: Record<string, string> = {}) {
  const url = new URL(engine.url);
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: ProblemBody }>(
    (resolve, reject) => {
      const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const body = (text === '' ? {} : JSON.parse(text)) as ProblemBody;
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
      });
      req.on('error', reject);
      req.end(body);
    },
  );
}

function expectProblem(
  answer: { status: number; headers: Record<string, string | string[] | undefined> | Headers; body: ProblemBody },
  status: number,
  code: string,
  pointer?: string,
): void {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  const type = answer.headers instanceof Headers ? answer.headers.get('content-type') : answer.headers['content-type'];
  assert.match(String(type), /^application\/problem\+json/);
  assert.equal(answer.body.code, code);
  assert.equal(answer.body.type, `https://mnemos.dev/problems/${code}`);
  assert.ok(answer.body.detail.length > 20, 'detail says what went wrong');
  if (pointer !== undefined)
    assert.ok(
      answer.body.errors?.some((e) => e.pointer === pointer),
      JSON.stringify(answer.body),
    );
}

describe('query integers are bounded', () => {
  const values = ['1e20', '9223372036854775807', 'Infinity', '-1', '1.5', 'NaN', '-Infinity'];
  for (const path of ['/v1/default/banks/known/memories', '/v1/default/banks']) {
    for (const value of values) {
      it(`${path}?offset=${value} is a 400 naming offset and its range`, async () => {
        const r = await call<ProblemBody>(engine.url, 'GET', `${path}?offset=${encodeURIComponent(value)}`);
        expectProblem(r, 400, 'validation_failed', '/querystring/offset');
        assert.match(r.body.detail, /offset must be an integer from 0 to 1000000000/);
      });
    }
  }
  it('a limit above its bound names the range too', async () => {
    const r = await call<ProblemBody>(engine.url, 'GET', '/v1/default/banks/known/memories?limit=1e20');
    expectProblem(r, 400, 'validation_failed', '/querystring/limit');
    assert.match(r.body.detail, /from 0 to 1000/);
  });
  it('the largest offset is accepted and answers an empty page', async () => {
    const r = await call<{ items: unknown[]; total: number }>(
      engine.url,
      'GET',
      '/v1/default/banks/known/memories?offset=1000000000',
    );
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.items, []);
    assert.equal(r.body.total, 1);
  });
});

describe('NUL characters and lone surrogates are refused in every string', () => {
  const cases: Array<{ name: string; method: string; path: string; body?: unknown; pointer: string }> = [
    {
      name: 'list document_id',
      method: 'GET',
      path: '/v1/default/banks/known/memories?document_id=a%00b',
      pointer: '/querystring/document_id',
    },
    {
      name: 'list type',
      method: 'GET',
      path: '/v1/default/banks/known/memories?type=world%00',
      pointer: '/querystring/type',
    },
    { name: 'list q', method: 'GET', path: '/v1/default/banks/known/memories?q=%00', pointer: '/querystring/q' },
    {
      name: 'list tags',
      method: 'GET',
      path: '/v1/default/banks/known/memories?tags=a&tags=b%00',
      pointer: '/querystring/tags/1',
    },
    { name: 'bank list q', method: 'GET', path: '/v1/default/banks?q=kn%00own', pointer: '/querystring/q' },
    {
      name: 'clear filter',
      method: 'DELETE',
      path: '/v1/default/banks/known/memories?type=world%00',
      pointer: '/querystring/type',
    },
    {
      name: 'retain document_id',
      method: 'POST',
      path: '/v1/default/banks/known/memories',
      body: { content: 'x', document_id: 'd\u0000' },
      pointer: '/document_id',
    },
    {
      name: 'retain tag',
      method: 'POST',
      path: '/v1/default/banks/known/memories',
      body: { content: 'x', tags: ['ok', 'b\u0000d'] },
      pointer: '/tags/1',
    },
    {
      name: 'metadata key',
      method: 'POST',
      path: '/v1/default/banks/known/memories',
      body: { content: 'x', metadata: { 'k\u0000': 'v' } },
      pointer: '/metadata/k\u0000',
    },
    {
      name: 'metadata value',
      method: 'POST',
      path: '/v1/default/banks/known/memories',
      body: { items: [{ content: 'x', metadata: { k: 'v\u0000' } }] },
      pointer: '/items/0/metadata/k',
    },
    {
      name: 'lone surrogate in content',
      method: 'POST',
      path: '/v1/default/banks/known/memories',
      body: { content: 'Lone surrogate \ud800 here' },
      pointer: '/content',
    },
    {
      name: 'lone low surrogate in a tag',
      method: 'POST',
      path: '/v1/default/banks/known/memories',
      body: { content: 'x', tags: ['\udc00'] },
      pointer: '/tags/0',
    },
    {
      name: 'recall query',
      method: 'POST',
      path: '/v1/default/banks/known/memories/recall',
      body: { query: 'who\u0000' },
      pointer: '/query',
    },
    {
      name: 'reflect response_schema',
      method: 'POST',
      path: '/v1/default/banks/known/reflect',
      body: { query: 'x', response_schema: { title: '\u0000' } },
      pointer: '/response_schema/title',
    },
    { name: 'bank name', method: 'PUT', path: '/v1/default/banks/known', body: { name: 'n\u0000' }, pointer: '/name' },
    {
      name: 'description-level bank_id',
      method: 'POST',
      path: '/v1/retain',
      body: { bank_id: 'known\u0000', content: 'x' },
      pointer: '/bank_id',
    },
  ];
  for (const c of cases) {
    it(`${c.name}: 400 validation_failed at ${JSON.stringify(c.pointer)}, nothing changes`, async () => {
      const before = await counts();
      const r = await call<ProblemBody>(engine.url, c.method, c.path, c.body);
      expectProblem(r, 400, 'validation_failed', c.pointer);
      assert.equal(await counts(), before);
    });
  }
  it('well-formed surrogate pairs (emoji) are stored', async () => {
    const r = await call(engine.url, 'POST', '/v1/default/banks/unicode/memories', {
      content: 'Emoji 🧠 and 🇵🇹 are fine',
    });
    assert.equal(r.status, 200);
  });
});

describe('JSON depth is capped before validation', () => {
  const nested = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  const arrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
  for (const [name, path, body] of [
    ['metadata 100 deep', '/v1/default/banks/known/memories', `{"content":"x","metadata":${nested(100)}}`],
    [
      'response_schema 8,000 deep',
      '/v1/default/banks/known/reflect',
      `{"query":"x","response_schema":${nested(8000)}}`,
    ],
    [
      'arrays 8,000 deep on an open field',
      '/v1/default/banks/known/memories',
      `{"content":"x","extra":${arrays(8000)}}`,
    ],
    ['8,000 deep on recall', '/v1/recall', `{"bank_id":"known","query":"x","include":${nested(8000)}}`],
  ] as const) {
    it(`${name}: 400 json_too_deep, the engine stays up`, async () => {
      const before = await counts();
      const r = await raw('POST', path, body, { 'content-type': 'application/json' });
      expectProblem(r, 400, 'json_too_deep');
      assert.match(r.body.detail, /more than 64 levels/);
      assert.equal(await counts(), before);
      assert.equal((await call(engine.url, 'GET', '/health/live')).status, 200);
    });
  }
  it('64 levels are accepted (brackets inside strings do not count)', async () => {
    const r = await raw(
      'POST',
      '/v1/default/banks/known/memories/recall',
      `{"query":"baseline [[[[{{{{","include":${nested(63)}}`,
      { 'content-type': 'application/json' },
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
  });
});

describe('framework errors are problem+json', () => {
  it('a wrong method on an existing path is 405 with Allow', async () => {
    const r = await call<ProblemBody>(engine.url, 'PUT', '/v1/recall', { query: 'x' });
    expectProblem(r, 405, 'method_not_allowed');
    assert.equal(r.headers.get('allow'), 'POST');
    const recall = await call<ProblemBody>(engine.url, 'PUT', '/v1/default/banks/known/memories/recall', {
      query: 'x',
    });
    expectProblem(recall, 405, 'method_not_allowed');
    assert.match(recall.headers.get('allow') ?? '', /POST/);
    const list = await call<ProblemBody>(engine.url, 'PATCH', '/v1/default/banks/known/memories');
    expectProblem(list, 405, 'method_not_allowed');
    assert.equal(list.headers.get('allow'), 'GET, HEAD, POST, DELETE');
  });
  it('an unknown path stays 404', async () => {
    expectProblem(await call<ProblemBody>(engine.url, 'PUT', '/v1/default/nothing-here'), 404, 'not_found');
  });
  it('a client that sends a too-large body whole before reading still gets its 413, not a reset', async () => {
    const before = await counts();
    const r = await uploadOversized(
      engine.url,
      '/v1/default/banks/known/memories',
      2 * engine.engine.config.maxBodyBytes,
    );
    assert.equal(r.error, undefined, `the connection failed with ${r.error}; received: ${r.received.slice(0, 200)}`);
    assert.match(r.received, /^HTTP\/1\.1 413 /);
    assert.match(r.received, /"code":"payload_too_large"/);
    assert.match(r.received, /MNEMOS_API_MAX_BODY_BYTES/);
    assert.equal(await counts(), before);
  });
  it('a text/plain body is 415', async () => {
    const before = await counts();
    const r = await raw('POST', '/v1/default/banks/known/memories', 'remember this', { 'content-type': 'text/plain' });
    expectProblem(r, 415, 'unsupported_media_type');
    assert.equal(await counts(), before);
  });
  it('a body without a content type is 415', async () => {
    const r = await raw('POST', '/v1/default/banks/known/memories', '{"content":"x"}');
    expectProblem(r, 415, 'unsupported_media_type');
  });
  for (const path of ['/v1/default/banks/%E0%A4%A/memories', '/v1/default/banks/%zz', '/v1/%E0%A4%A/banks']) {
    it(`bad percent-encoding (${path}) is a 400 problem`, async () => {
      expectProblem(await raw('GET', path), 400, 'bad_request');
    });
  }
});

describe('body-less requests with a JSON content type', () => {
  const json = { 'content-type': 'application/json' };
  it('DELETE of a memory with Content-Type: application/json and no body succeeds', async () => {
    const made = await call<{ memory_ids: string[] }>(engine.url, 'POST', '/v1/default/banks/known/memories', {
      content: 'Temporary memory to delete.',
    });
    const r = await raw('DELETE', `/v1/default/banks/known/memories/${made.body.memory_ids[0]!}`, '', {
      ...json,
      'content-length': '0',
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  });
  it('GET, OPTIONS and DELETE with an empty JSON body are not refused for it', async () => {
    const empty = { ...json, 'content-length': '0' };
    const got = await raw('GET', `/v1/default/banks/known/memories/${memoryId}`, '', empty);
    assert.equal(got.status, 200);
    // OPTIONS is answered by the router (no route takes it), not refused for its empty body.
    expectProblem(await raw('OPTIONS', '/v1/default/banks/known', '', json), 405, 'method_not_allowed');
    const missing = await raw(
      'DELETE',
      '/v1/default/banks/known/memories/00000000-0000-4000-8000-000000000000',
      '',
      json,
    );
    expectProblem(missing, 404, 'memory_not_found');
    const clear = await raw('DELETE', '/v1/default/banks/emptied/memories?type=world', '', json);
    assert.equal(clear.status, 200, JSON.stringify(clear.body));
  });
  it('a POST that needs a body and sends none still gets a clear 400', async () => {
    const r = await raw('POST', '/v1/default/banks/known/memories', '', { ...json, 'content-length': '0' });
    expectProblem(r, 400, 'validation_failed');
    assert.match(r.body.detail, /body is empty/);
  });
});

describe('without a token only the default tenant is served', () => {
  for (const tenant of ['retain', 'recall', 'reflect']) {
    it(`/v1/${tenant}/banks/... is 404 tenant_not_found`, async () => {
      const before = await counts();
      const r = await call<ProblemBody>(engine.url, 'POST', `/v1/${tenant}/banks/known/memories`, { content: 'x' });
      expectProblem(r, 404, 'tenant_not_found');
      expectProblem(await call<ProblemBody>(engine.url, 'GET', `/v1/${tenant}/banks`), 404, 'tenant_not_found');
      assert.equal(await counts(), before);
    });
  }
  it('the description-level paths still work', async () => {
    const r = await call(engine.url, 'POST', '/v1/recall', { bank_id: 'known', query: 'baseline' });
    assert.equal(r.status, 200);
  });
});
