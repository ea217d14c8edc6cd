// The shared input layer on the gateway: bounded query integers, NUL and lone surrogates refused in every string,
// a JSON depth cap on every route, framework errors as problem+json, body-less requests with a JSON content type,
// one problem type URI scheme, and engine client errors passed through unchanged.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import {
  ADMIN_TOKEN,
  call,
  isProblem,
  obj,
  setupProject,
  startHarness,
  startTestEngine,
  type EngineHandle,
  type Harness,
  type Res,
} from './helpers.js';
import { uploadOversized } from '../../engine/test/helpers/oversized-upload.js';

const ALL_SCOPES = [
  'memory:retain',
  'memory:recall',
  'memory:reflect',
  'memory:delete',
  'project:read',
  'project:write',
  'mcp',
];

describe('gateway input layer', () => {
  let engine: EngineHandle;
  let h: Harness;
  let key: string;
  let projectId: string;
  let accountId: string;

  /** An exact raw request (fetch would normalise the path and refuse some bodies). */
  const raw = (method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Res> => {
    const url = new URL(h.url);
    return new Promise((resolve, reject) => {
      const auth = { authorization: `Bearer ${key}` };
      const options = { host: url.hostname, port: url.port, method, path, headers: { ...auth, ...headers } };
      const req = httpRequest(options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            /* not JSON */
          }
          const headersOut = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headersOut.set(k, v);
          resolve({ status: res.statusCode ?? 0, headers: headersOut, body: parsed, text });
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  };

  /** Rows in the control plane and memories in the engine, to prove a rejected request changed nothing. */
  const counts = async (): Promise<string> => {
    const client = new pg.Client({ connectionString: h.db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ p: number; k: number; a: number }>(
        `SELECT (SELECT count(*)::int FROM projects) AS p, (SELECT count(*)::int FROM api_keys) AS k,
                (SELECT count(*)::int FROM accounts) AS a`,
      );
      const list = await call(h.url, 'GET', '/v1/me/banks/known/memories', { token: key });
      return JSON.stringify({ ...rows[0], memories: obj(list.body)['total'] });
    } finally {
      await client.end();
    }
  };

  const expectProblem = (res: Res, status: number, code: string, pointer?: string): void => {
    assert.ok(isProblem(res, status, code), `${res.status} ${res.text}`);
    assert.equal(obj(res.body)['type'], `https://mnemos.dev/problems/${code}`);
    if (pointer !== undefined) {
      const errors = (obj(res.body)['errors'] ?? []) as Array<{ pointer: string }>;
      assert.ok(
        errors.some((e) => e.pointer === pointer),
        res.text,
      );
    }
  };

  before(async () => {
    engine = await startTestEngine();
    h = await startHarness(engine.url);
    ({ key, projectId, accountId } = await setupProject(h.url, { scopes: ALL_SCOPES }));
    const r = await call(h.url, 'POST', '/v1/me/banks/known/memories', {
      token: key,
      body: { content: 'Ada keeps a baseline memory.' },
    });
    assert.equal(r.status, 200, r.text);
  });
  after(async () => {
    await h?.close();
    await engine?.close();
  });

  for (const value of ['1e20', '9223372036854775807', 'Infinity', '-1', '1.5']) {
    it(`?offset=${value} is a 400 naming offset and its range`, async () => {
      for (const path of ['/v1/me/banks/known/memories', '/v1/me/banks']) {
        const r = await call(h.url, 'GET', `${path}?offset=${encodeURIComponent(value)}`, { token: key });
        expectProblem(r, 400, 'validation_failed', '/querystring/offset');
        assert.match(String(obj(r.body)['detail']), /offset must be an integer from 0 to 1000000000/);
      }
    });
  }

  type NulCase = { name: string; method: string; path: string; body?: unknown; token?: string; pointer: string };
  const nulCases: NulCase[] = [
    {
      name: 'project name',
      method: 'POST',
      path: '/admin/projects',
      body: { name: 'p\u0000', account_id: '' },
      token: ADMIN_TOKEN,
      pointer: '/name',
    },
    {
      name: 'project rename',
      method: 'PATCH',
      path: '/admin/projects/PID',
      body: { name: 'p\u0000' },
      token: ADMIN_TOKEN,
      pointer: '/name',
    },
    { name: 'key name', method: 'POST', path: '/v1/me/keys', body: { name: 'k\u0000' }, pointer: '/name' },
    {
      name: 'account email',
      method: 'POST',
      path: '/admin/accounts',
      body: { email: 'a\u0000@example.com', password: 'correct horse battery' },
      token: ADMIN_TOKEN,
      pointer: '/email',
    },
    {
      name: 'retain tag',
      method: 'POST',
      path: '/v1/me/banks/known/memories',
      body: { content: 'x', tags: ['t\u0000'] },
      pointer: '/tags/0',
    },
    {
      name: 'metadata key',
      method: 'POST',
      path: '/v1/retain',
      body: { bank_id: 'known', content: 'x', metadata: { 'k\u0000': 'v' } },
      pointer: '/metadata/k\u0000',
    },
    {
      name: 'lone surrogate in content',
      method: 'POST',
      path: '/v1/me/banks/known/memories',
      body: { content: 'x \ud800 y' },
      pointer: '/content',
    },
    {
      name: 'list document filter',
      method: 'GET',
      path: '/v1/me/banks/known/memories?q=%00',
      pointer: '/querystring/q',
    },
    {
      name: 'clear filter',
      method: 'DELETE',
      path: '/v1/me/banks/known/memories?type=world%00',
      pointer: '/querystring/type',
    },
    { name: 'bank list q', method: 'GET', path: '/v1/me/banks?q=%00', pointer: '/querystring/q' },
  ];
  for (const c of nulCases) {
    it(`a NUL or lone surrogate in the ${c.name} is 400 validation_failed, nothing changes`, async () => {
      const before = await counts();
      const withAccount = (value: unknown): unknown =>
        JSON.parse(JSON.stringify(value).replace('"account_id":""', `"account_id":"${accountId}"`));
      const body = c.body === undefined ? undefined : withAccount(c.body);
      const r = await call(h.url, c.method, c.path.replace('PID', projectId), {
        token: c.token ?? key,
        ...(body === undefined ? {} : { body }),
      });
      expectProblem(r, 400, 'validation_failed', c.pointer);
      assert.equal(await counts(), before);
    });
  }

  const nested = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  for (const [name, path, body, token] of [
    [
      'reflect response_schema',
      '/v1/me/banks/known/reflect',
      `{"query":"x","response_schema":${nested(8000)}}`,
      undefined,
    ],
    ['recall include', '/v1/recall', `{"bank_id":"known","query":"x","include":${nested(100)}}`, undefined],
    ['admin project quotas', '/admin/projects/PID', `{"quotas":${nested(8000)}}`, ADMIN_TOKEN],
    ['MCP message', '/mcp', `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":${nested(8000)}}`, undefined],
  ] as const) {
    it(`JSON nested too deep (${name}) is 400 json_too_deep; the gateway stays up`, async () => {
      const before = await counts();
      const r = await raw(path.startsWith('/admin') ? 'PATCH' : 'POST', path.replace('PID', projectId), body, {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      });
      expectProblem(r, 400, 'json_too_deep');
      assert.equal(await counts(), before);
      assert.equal((await call(h.url, 'GET', '/health/live')).status, 200);
    });
  }

  it('a wrong method on an existing path is 405 with Allow', async () => {
    const usage = await call(h.url, 'PUT', '/v1/me/usage', { token: key, body: {} });
    expectProblem(usage, 405, 'method_not_allowed');
    assert.equal(usage.headers.get('allow'), 'GET, HEAD');
    const retain = await call(h.url, 'PATCH', '/v1/retain', { token: key, body: {} });
    expectProblem(retain, 405, 'method_not_allowed');
    assert.equal(retain.headers.get('allow'), 'POST');
    expectProblem(await call(h.url, 'PUT', '/v1/me/nothing-here', { token: key }), 404, 'not_found');
  });

  it('a text/plain body is 415 and a body without a content type too', async () => {
    const before = await counts();
    expectProblem(
      await raw('POST', '/v1/me/banks/known/memories', 'remember this', { 'content-type': 'text/plain' }),
      415,
      'unsupported_media_type',
    );
    expectProblem(await raw('POST', '/v1/me/banks/known/memories', '{"content":"x"}'), 415, 'unsupported_media_type');
    assert.equal(await counts(), before);
  });

  it('bad percent-encoding in the path is a 400 problem', async () => {
    expectProblem(await raw('GET', '/v1/me/banks/%E0%A4%A/memories'), 400, 'bad_request');
  });

  it('DELETE with Content-Type: application/json and an empty body is accepted (and forwarded as body-less)', async () => {
    const made = await call(h.url, 'POST', '/v1/me/banks/known/memories', {
      token: key,
      body: { content: 'A memory to delete soon.' },
    });
    const id = (obj(made.body)['memory_ids'] as string[])[0]!;
    const del = await raw('DELETE', `/v1/me/banks/known/memories/${id}`, '', {
      'content-type': 'application/json',
      'content-length': '0',
    });
    assert.equal(del.status, 200, del.text);
    const get = await raw('GET', '/v1/me/usage', '', { 'content-type': 'application/json', 'content-length': '0' });
    assert.equal(get.status, 200, get.text);
    const post = await raw('POST', '/v1/me/banks/known/memories', '', {
      'content-type': 'application/json',
      'content-length': '0',
    });
    expectProblem(post, 400, 'validation_failed');
  });

  it('a client that sends a too-large body whole before reading still gets its 413, not a reset', async () => {
    const before = await counts();
    const r = await uploadOversized(
      h.url,
      '/v1/me/banks/known/memories',
      2 * 1024 * 1024 + 1,
      `Authorization: Bearer ${key}\r\n`,
    );
    assert.equal(r.error, undefined, `the connection failed with ${r.error}; received: ${r.received.slice(0, 200)}`);
    assert.match(r.received, /^HTTP\/1\.1 413 /);
    assert.match(r.received, /"code":"payload_too_large"/);
    assert.match(r.received, /GATEWAY_MAX_BODY_BYTES/);
    assert.equal(await counts(), before);
  });

  it('engine client errors reach the caller unchanged (not as 502)', async () => {
    const r = await call(h.url, 'POST', '/v1/me/banks/known/memories/recall', {
      token: key,
      body: { query: 'x', types: ['bogus'] },
    });
    expectProblem(r, 400, 'validation_failed', '/types');
    assert.match(String(obj(r.body)['detail']), /Unknown memory type "bogus"/);
  });
});
