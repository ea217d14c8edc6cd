// Control plane without forwarding: admin API, keys, malformed credentials, scopes, engine down, CORS, OpenAPI.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ADMIN_TOKEN,
  KEY_LIFETIME_MS,
  call,
  isProblem,
  obj,
  setupProject,
  startHarness,
  type Harness,
} from './helpers.js';

// Nothing listens on this port: the engine is "down".
const DEAD_ENGINE = 'http://127.0.0.1:9';

describe('gateway control plane', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness(DEAD_ENGINE, { GATEWAY_CORS_ORIGINS: 'https://app.example.com, https://docs.example.com' });
  });
  after(async () => {
    await h.close();
  });

  it('admin API needs the admin token', async () => {
    assert.ok(isProblem(await call(h.url, 'POST', '/admin/projects', { body: { name: 'x' } }), 401, 'unauthorized'));
    assert.ok(
      isProblem(
        await call(h.url, 'POST', '/admin/projects', { token: 'wrong-token-wrong-token', body: { name: 'x' } }),
        401,
      ),
    );
    const ok = await call(h.url, 'POST', '/admin/projects', { token: ADMIN_TOKEN, body: { name: 'x' } });
    assert.equal(ok.status, 201);
    assert.match(String(obj(ok.body)['id']), /^prj_[a-z0-9]{20}$/);
  });

  it('rejects bad admin input with problem+json', async () => {
    assert.ok(
      isProblem(
        await call(h.url, 'POST', '/admin/projects', { token: ADMIN_TOKEN, body: {} }),
        400,
        'validation_failed',
      ),
    );
    assert.ok(
      isProblem(
        await call(h.url, 'POST', '/admin/projects', { token: ADMIN_TOKEN, raw: '{"name":' }),
        400,
        'malformed_json',
      ),
    );
    assert.ok(
      isProblem(
        await call(h.url, 'POST', '/admin/projects', { token: ADMIN_TOKEN, body: { name: 'x', plan: 'gold' } }),
        400,
      ),
    );
    assert.ok(
      isProblem(
        await call(h.url, 'POST', '/admin/projects', { token: ADMIN_TOKEN, body: { name: 'x', engine: 'nope' } }),
        400,
      ),
    );
    assert.ok(
      isProblem(
        await call(h.url, 'PATCH', '/admin/projects/prj_missing', { token: ADMIN_TOKEN, body: { plan: 'pro' } }),
        404,
      ),
    );
    assert.ok(
      isProblem(
        await call(h.url, 'POST', '/admin/accounts', { token: ADMIN_TOKEN, body: { email: 'not-an-email' } }),
        400,
      ),
    );
    const dup = { email: 'dup@example.com' };
    assert.equal((await call(h.url, 'POST', '/admin/accounts', { token: ADMIN_TOKEN, body: dup })).status, 201);
    assert.ok(
      isProblem(await call(h.url, 'POST', '/admin/accounts', { token: ADMIN_TOKEN, body: dup }), 409, 'account_exists'),
    );
    assert.ok(isProblem(await call(h.url, 'GET', '/nowhere', {}), 404, 'not_found'));
  });

  it('creates keys shown once, stored as a hash, listed by prefix', async () => {
    const { projectId, key } = await setupProject(h.url);
    assert.match(key, /^mnm_live_[0-9A-Za-z]{43}$/);
    const list = await call(h.url, 'GET', `/admin/projects/${projectId}/keys`, { token: ADMIN_TOKEN });
    assert.equal(list.status, 200);
    const items = obj(list.body)['items'] as Array<Record<string, unknown>>;
    assert.equal(items.length, 1);
    assert.equal(items[0]?.['prefix'], key.slice(0, 17));
    assert.ok(!list.text.includes(key.slice(17)), 'the secret never appears again');
    const rows = await h.gw.app.inject({
      method: 'GET',
      url: '/v1/me/keys',
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(rows.statusCode, 200);
    assert.ok(!rows.body.includes(key.slice(17)));
  });

  it('refuses malformed, unknown, revoked and expired credentials with 401 problem+json', async () => {
    const { projectId, key } = await setupProject(h.url);
    for (const auth of [
      '',
      'Basic abc',
      'Bearer',
      'Bearer mnm_live_short',
      `Bearer ${key}x`,
      `Bearer ${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`,
      'Bearer not-a-token',
      `Bearer ${'a'.repeat(600)}`,
      'Bearer \u00e9\u00e9',
    ]) {
      const res = await call(h.url, 'GET', '/v1/me/usage', { headers: auth === '' ? {} : { authorization: auth } });
      assert.ok(isProblem(res, 401, 'unauthorized'), `${auth}: ${res.status} ${res.text}`);
      assert.ok(res.headers.get('www-authenticate')?.startsWith('Bearer'));
    }
    assert.equal((await call(h.url, 'GET', '/v1/me/usage', { token: key })).status, 200);
    const list = await call(h.url, 'GET', '/v1/me/keys', { token: key });
    const id = String(((obj(list.body)['items'] as Json[])[0] ?? {})['id']);
    const revoked = await call(h.url, 'DELETE', `/v1/me/keys/${id}`, { token: key });
    assert.equal(revoked.status, 200);
    const after = await call(h.url, 'GET', '/v1/me/usage', { token: key });
    assert.ok(isProblem(after, 401, 'unauthorized'));
    assert.match(String(obj(after.body)['detail']), /revoked/);

    // The key must still be valid for the first call (create and use it, even on a loaded machine), then expire.
    const soon = new Date(Date.now() + KEY_LIFETIME_MS).toISOString();
    const exp = await call(h.url, 'POST', `/admin/projects/${projectId}/keys`, {
      token: ADMIN_TOKEN,
      body: { expires_at: soon, scopes: ['project:read'] },
    });
    assert.equal(exp.status, 201);
    const expKey = String(obj(exp.body)['key']);
    assert.equal((await call(h.url, 'GET', '/v1/me/usage', { token: expKey })).status, 200);
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(soon) - Date.now()) + 100));
    const expired = await call(h.url, 'GET', '/v1/me/usage', { token: expKey });
    assert.ok(isProblem(expired, 401));
    assert.match(String(obj(expired.body)['detail']), /expired/);
    const past = await call(h.url, 'POST', `/admin/projects/${projectId}/keys`, {
      token: ADMIN_TOKEN,
      body: { expires_at: '2001-01-01T00:00:00Z' },
    });
    assert.ok(isProblem(past, 400, 'validation_failed'));
  });

  it('enforces scopes per operation (403 insufficient_scope), before validating the body', async () => {
    const { key } = await setupProject(h.url, { scopes: ['memory:recall'] });
    const cases: Array<[string, string, string, unknown?]> = [
      ['memory:retain', 'POST', '/v1/me/banks/alice/memories', { content: 'x' }],
      ['memory:retain', 'POST', '/v1/retain', { bank_id: 'alice', content: 'x' }],
      ['memory:reflect', 'POST', '/v1/me/banks/alice/reflect', { query: 'q' }],
      ['memory:reflect', 'POST', '/v1/reflect', {}],
      ['memory:delete', 'DELETE', '/v1/me/banks/alice'],
      ['memory:delete', 'DELETE', '/v1/me/banks/alice/memories'],
      ['memory:delete', 'POST', '/v1/me/banks/alice/memories/delete', { filter: { type: 'world' } }],
      ['memory:retain', 'POST', '/v1/me/banks/alice/memories/update', { ids: [], set: {} }],
      ['memory:retain', 'POST', '/v1/me/banks/alice/import', {}],
      ['memory:delete', 'DELETE', '/v1/me/banks/alice/memories/0b8f8a36-1b7e-4a43-9d40-4d3b3f6fd111'],
      ['project:read', 'GET', '/v1/me/usage'],
      ['project:write', 'POST', '/v1/me/keys', {}],
      ['project:write', 'GET', '/v1/me/oauth/clients'],
      ['mcp', 'POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }],
    ];
    for (const [scope, method, p, body] of cases) {
      const res = await call(h.url, method, p, { token: key, body });
      assert.ok(isProblem(res, 403, 'insufficient_scope'), `${method} ${p}: ${res.status} ${res.text}`);
      assert.equal(obj(res.body)['required_scope'], scope);
    }
  });

  it('a key can only grant scopes it holds', async () => {
    const { key } = await setupProject(h.url, { scopes: ['project:write', 'memory:recall'] });
    assert.ok(
      isProblem(
        await call(h.url, 'POST', '/v1/me/keys', { token: key, body: { scopes: ['memory:delete'] } }),
        403,
        'insufficient_scope',
      ),
    );
    const ok = await call(h.url, 'POST', '/v1/me/keys', {
      token: key,
      body: { scopes: ['memory:recall'], name: 'child' },
    });
    assert.equal(ok.status, 201);
    const dflt = await call(h.url, 'POST', '/v1/me/keys', { token: key, body: {} });
    // The default is the memory scopes the creator holds; project:write is never handed on unless asked for.
    assert.deepEqual(obj(dflt.body)['scopes'], ['memory:recall']);
    assert.ok(
      isProblem(await call(h.url, 'POST', '/v1/me/keys', { token: key, body: { scopes: ['memory:everything'] } }), 400),
    );
    assert.ok(isProblem(await call(h.url, 'POST', '/v1/me/keys', { token: key, body: { unknown: 1 } }), 400));
  });

  it('answers 503 with Retry-After at once when the engine is down, and counts nothing', async () => {
    const { projectId, key } = await setupProject(h.url);
    const started = Date.now();
    const res = await call(h.url, 'POST', '/v1/me/banks/alice/memories/recall', {
      token: key,
      body: { query: 'hello' },
    });
    assert.ok(isProblem(res, 503, 'engine_unavailable'), res.text);
    assert.ok(Number(res.headers.get('retry-after')) > 0);
    assert.ok(Date.now() - started < 5000);
    const usage = await call(h.url, 'GET', `/admin/projects/${projectId}/usage`, { token: ADMIN_TOKEN });
    assert.equal(obj(obj(usage.body)['recalls'])['used'], 0);
  });

  it('validates memory request bodies and paths with 4xx problem+json', async () => {
    const { key } = await setupProject(h.url);
    const bad: Array<[string, string, unknown]> = [
      ['POST', '/v1/me/banks/alice/memories', {}],
      ['POST', '/v1/me/banks/alice/memories', { items: [] }],
      ['POST', '/v1/me/banks/alice/memories', { content: 42 }],
      ['POST', '/v1/me/banks/alice/memories/recall', { query: '' }],
      ['POST', '/v1/me/banks/alice/memories/recall', []],
      ['POST', '/v1/me/banks/bad%20bank/memories/recall', { query: 'x' }],
      ['POST', `/v1/me/banks/${'a'.repeat(300)}/memories/recall`, { query: 'x' }],
      ['POST', '/v1/recall', { query: 'x' }],
      ['POST', '/v1/retain', { bank_id: 'a/b', content: 'x' }],
    ];
    for (const [method, p, body] of bad) {
      const res = await call(h.url, method, p, { token: key, body });
      assert.ok(
        res.status >= 400 && res.status < 500 && isProblem(res, res.status),
        `${p} ${JSON.stringify(body)}: ${res.status} ${res.text}`,
      );
    }
    const notJson = await call(h.url, 'POST', '/v1/me/banks/alice/memories', { token: key, raw: '{"content": "x"' });
    assert.ok(isProblem(notJson, 400), notJson.text);
    const wrongType = await call(h.url, 'POST', '/v1/me/banks/alice/memories', {
      token: key,
      raw: 'content=x',
      headers: { 'content-type': 'text/html' },
    });
    assert.ok(isProblem(wrongType, 415), wrongType.text);
  });

  it('allows only the listed CORS origins', async () => {
    const pre = async (origin: string): Promise<Response> =>
      fetch(`${h.url}/v1/me/banks/a/memories/recall`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type',
        },
      });
    const ok = await pre('https://app.example.com');
    assert.equal(ok.headers.get('access-control-allow-origin'), 'https://app.example.com');
    const docs = await pre('https://docs.example.com');
    assert.equal(docs.headers.get('access-control-allow-origin'), 'https://docs.example.com');
    for (const origin of ['https://evil.example.com', 'https://app.example.com.evil.net', 'null']) {
      const res = await pre(origin);
      assert.equal(res.headers.get('access-control-allow-origin'), null, origin);
    }
    const simple = await fetch(`${h.url}/health`, { headers: { origin: 'https://evil.example.com' } });
    assert.equal(simple.headers.get('access-control-allow-origin'), null);
  });

  it('publishes an OpenAPI 3.1.0 document with OAuth and API-key security', async () => {
    const res = await call(h.url, 'GET', '/openapi.json');
    assert.equal(res.status, 200);
    const doc = obj(res.body);
    assert.equal(doc['openapi'], '3.1.0');
    const schemes = obj(obj(doc['components'])['securitySchemes']);
    const oauth = obj(schemes['oauth2']);
    assert.equal(oauth['type'], 'oauth2');
    const flows = obj(oauth['flows']);
    const scopes = [
      'memory:retain',
      'memory:recall',
      'memory:reflect',
      'memory:delete',
      'mcp',
      'project:read',
      'project:write',
    ];
    for (const flow of ['authorizationCode', 'clientCredentials']) {
      assert.deepEqual(Object.keys(obj(obj(flows[flow])['scopes'])).sort(), [...scopes].sort());
    }
    assert.equal(obj(flows['authorizationCode'])['authorizationUrl'], `${h.url}/oauth/authorize`);
    assert.deepEqual(doc['security'], [{ oauth2: scopes }]);
    assert.equal(obj(schemes['apiKey'])['scheme'], 'bearer');
    const paths = obj(doc['paths']);
    const op = (p: string, m: string): Json => obj(obj(paths[p])[m]);
    assert.equal(op('/v1/retain', 'post')['operationId'], 'retain');
    assert.equal(op('/v1/recall', 'post')['operationId'], 'recall');
    assert.equal(op('/v1/reflect', 'post')['operationId'], 'reflect');
    // The console's session cookie with X-Mnemos-Project is the third way in.
    const console = { consoleSession: [], consoleProject: [] };
    assert.deepEqual(op('/v1/recall', 'post')['security'], [{ oauth2: ['memory:recall'] }, { apiKey: [] }, console]);
    const erase = op('/v1/me/banks/{bank}', 'delete');
    assert.deepEqual(erase['security'], [{ oauth2: ['memory:delete'] }, { apiKey: [] }, console]);
    assert.deepEqual(op('/v1/me/usage', 'get')['security'], [{ oauth2: ['project:read'] }, { apiKey: [] }, console]);
  });
});

type Json = Record<string, unknown>;
