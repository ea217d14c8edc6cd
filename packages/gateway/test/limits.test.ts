// Credential limits: authentication before any body byte is read, keys and OAuth clients never wider than their
// creator, bank and space limits on every path (MCP list_banks, org memory, operation status), failed MCP tool calls
// not charged, wrong admin tokens throttled per address. Real gateway, real engine, real PostgreSQL control plane.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
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
  type Json,
  type Res,
} from './helpers.js';

/**
 * Sends a request's headers only (a large declared body, none of it written) and resolves the status line once the
 * server has answered and closed the connection.
 */
function headersOnly(base: string, method: string, path: string, headers: Record<string, string>): Promise<string> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    let received = '';
    // Generous: the answer comes within milliseconds; without one the server is waiting for the body.
    const timer = setTimeout(() => {
      socket.destroy();
      const got = JSON.stringify(received);
      reject(new Error(`${method} ${path}: no answer and close while the body was unsent: ${got}`));
    }, 5_000);
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    socket.on('end', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(received.slice(0, received.indexOf('\r\n')));
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    const lines = [
      `${method} ${path} HTTP/1.1`,
      `host: ${url.host}`,
      'content-type: application/json',
      'content-length: 1000000',
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ];
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}

/** A JSON request sent from a given local address (loopback has all of 127.0.0.0/8). */
function callFrom(
  localAddress: string,
  base: string,
  path: string,
  token: string,
  body: unknown,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Json }> {
  const url = new URL(path, base);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        localAddress,
        agent: false,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(payload)),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: obj(JSON.parse(text) as unknown) });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const basic = (id: string, secret: string): string =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

async function clientToken(base: string, id: string, secret: string, scope: string): Promise<string> {
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(id, secret) },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope }).toString(),
  });
  const body = obj(await res.json());
  assert.equal(res.status, 200, JSON.stringify(body));
  return String(body['access_token']);
}

const MCP_HEADERS = { accept: 'application/json, text/event-stream' };
const rpc = (id: number, method: string, params: Json): Json => ({ jsonrpc: '2.0', id, method, params });

/** The JSON-RPC answer of an MCP call (JSON, or the last SSE data line). */
function rpcAnswer(text: string): Json {
  const data = text
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).trim())
    .pop();
  return obj(JSON.parse(data ?? text) as unknown);
}

/** The data of a tool result (tools answer JSON as text content). */
function toolData(text: string): Json {
  const result = obj(rpcAnswer(text)['result']);
  const first = obj((result['content'] as unknown[] | undefined)?.[0]);
  return obj(JSON.parse(String(first['text'])) as unknown);
}

describe('credential limits', () => {
  let engine: EngineHandle;
  let h: Harness;
  let owner: { projectId: string; key: string };
  let operationId: string;

  const post = (token: string, path: string, body: unknown): Promise<Res> => call(h.url, 'POST', path, { token, body });
  const get = (token: string, path: string): Promise<Res> => call(h.url, 'GET', path, { token });
  const tool = (token: string, id: number, name: string, args: Json): Promise<Res> =>
    call(h.url, 'POST', '/mcp', {
      token,
      headers: MCP_HEADERS,
      body: rpc(id, 'tools/call', { name, arguments: args }),
    });
  const recall = (token: string, bank: string, body: Json): Promise<Res> =>
    post(token, `/v1/me/banks/${bank}/memories/recall`, body);
  const adminKey = async (body: Json): Promise<string> => {
    const res = await post(ADMIN_TOKEN, `/admin/projects/${owner.projectId}/keys`, body);
    assert.equal(res.status, 201, res.text);
    return String(obj(res.body)['key']);
  };
  const inAnHour = (): string => new Date(Date.now() + 3_600_000).toISOString();
  const MEMORY_SCOPES = ['memory:retain', 'memory:recall', 'memory:reflect', 'memory:delete', 'mcp'];

  before(async () => {
    engine = await startTestEngine();
    h = await startHarness(engine.url);
    owner = await setupProject(h.url);
    const put = await call(h.url, 'PUT', '/v1/me/banks/b3', { token: owner.key, body: { space: 'acme' } });
    assert.equal(put.status, 200, put.text);
    for (const [bank, content] of [
      ['b1', 'The office is in Porto.'],
      ['b3', 'Acme ships on Fridays.'],
    ] as const) {
      const res = await post(owner.key, `/v1/me/banks/${bank}/memories`, { content });
      assert.equal(res.status, 200, res.text);
    }
    const asyncRetain = await post(owner.key, '/v1/me/banks/b2/memories', { content: 'Bank two memory.', async: true });
    assert.equal(asyncRetain.status, 200, asyncRetain.text);
    operationId = String(obj(asyncRetain.body)['operation_id']);
    const org = await post(owner.key, '/v1/me/spaces/acme/memories', { content: 'Acme policy: badges at all times.' });
    assert.equal(org.status, 200, org.text);
  });
  after(async () => {
    await h.close();
    await engine.close();
  });

  it('answers a missing or wrong credential before reading any of the body, and closes the connection', async () => {
    const unknownKey = 'Bearer mnm_live_0000000000000000000000000000000000000000000';
    for (const [method, path] of [
      ['POST', '/v1/me/banks/b1/memories'],
      ['POST', '/v1/retain'],
      ['POST', '/v1/me/keys'],
      ['POST', '/v1/me/oauth/clients'],
      ['POST', '/mcp'],
      ['POST', '/admin/projects'],
    ] as const) {
      assert.match(
        await headersOnly(h.url, method, path, {}),
        /^HTTP\/1\.1 401 /,
        `${method} ${path} without a credential`,
      );
      assert.match(
        await headersOnly(h.url, method, path, { authorization: unknownKey }),
        /^HTTP\/1\.1 401 /,
        `${method} ${path} with an unknown key`,
      );
    }
    // A valid credential without the route's scope is refused before the body too.
    const recallOnly = { authorization: `Bearer ${await adminKey({ scopes: ['memory:recall'] })}` };
    assert.match(await headersOnly(h.url, 'POST', '/v1/me/keys', recallOnly), /^HTTP\/1\.1 403 /);
    assert.match(await headersOnly(h.url, 'POST', '/v1/me/banks/b1/memories', recallOnly), /^HTTP\/1\.1 403 /);
  });

  it('new keys get the memory scopes and mcp by default, project scopes only when asked for', async () => {
    const made = await post(ADMIN_TOKEN, `/admin/projects/${owner.projectId}/keys`, {});
    assert.deepEqual(obj(made.body)['scopes'], MEMORY_SCOPES);
    const child = await post(owner.key, '/v1/me/keys', {});
    assert.equal(child.status, 201, child.text);
    assert.deepEqual(obj(child.body)['scopes'], MEMORY_SCOPES);
    assert.ok(isProblem(await post(String(obj(child.body)['key']), '/v1/me/keys', {}), 403, 'insufficient_scope'));
    const manager = await post(owner.key, '/v1/me/keys', { scopes: ['project:write', 'memory:recall'] });
    assert.deepEqual(obj(manager.body)['scopes'], ['project:write', 'memory:recall']);
    // A credential holding none of the default scopes must name what to grant.
    const onlyWrite = await adminKey({ scopes: ['project:write'] });
    assert.ok(isProblem(await post(onlyWrite, '/v1/me/keys', {}), 400, 'validation_failed'));
    const named = await post(onlyWrite, '/v1/me/keys', { scopes: ['project:write'] });
    assert.deepEqual(obj(named.body)['scopes'], ['project:write']);
  });

  it('a limited key creates keys at most as limited as itself', async () => {
    const expiry = inAnHour();
    const limited = await adminKey({
      scopes: ['project:write', 'memory:recall'],
      banks: ['b1', 'b2'],
      spaces: ['default', 'acme'],
      expires_at: expiry,
    });
    const inherited = await post(limited, '/v1/me/keys', {});
    assert.equal(inherited.status, 201, inherited.text);
    const ib = obj(inherited.body);
    assert.deepEqual(ib['banks'], ['b1', 'b2']);
    assert.deepEqual(ib['spaces'], ['default', 'acme']);
    assert.equal(ib['expires_at'], expiry);
    assert.deepEqual(ib['scopes'], ['memory:recall']);

    const soon = new Date(Date.now() + 60_000).toISOString();
    const narrower = await post(limited, '/v1/me/keys', { banks: ['b1'], spaces: ['acme'], expires_at: soon });
    assert.equal(narrower.status, 201, narrower.text);
    assert.deepEqual(obj(narrower.body)['banks'], ['b1']);

    const widerBanks = await post(limited, '/v1/me/keys', { banks: ['b1', 'b9'] });
    assert.ok(isProblem(widerBanks, 403, 'forbidden'), widerBanks.text);
    assert.match(String(obj(widerBanks.body)['detail']), /banks.*"b9"/);
    const widerSpaces = await post(limited, '/v1/me/keys', { spaces: ['other'] });
    assert.ok(isProblem(widerSpaces, 403, 'forbidden'));
    assert.match(String(obj(widerSpaces.body)['detail']), /spaces.*"other"/);
    const later = await post(limited, '/v1/me/keys', { expires_at: new Date(Date.now() + 7_200_000).toISOString() });
    assert.ok(isProblem(later, 403, 'forbidden'));
    assert.match(String(obj(later.body)['detail']), /expires at/);
    assert.ok(isProblem(await post(limited, '/v1/me/keys', { scopes: ['memory:retain'] }), 403, 'insufficient_scope'));
  });

  it('a limited key creates OAuth clients with its limits; their tokens create keys with them too', async () => {
    const expiry = inAnHour();
    const limited = await adminKey({ scopes: ['project:write', 'memory:recall'], banks: ['b1'], expires_at: expiry });
    const clients = '/v1/me/oauth/clients';
    const wider = await post(limited, clients, { name: 'svc', scopes: ['memory:recall'], banks: ['b2'] });
    assert.ok(isProblem(wider, 403, 'forbidden'), wider.text);
    const moreScopes = await post(limited, clients, { name: 'svc', scopes: ['memory:retain'] });
    assert.ok(isProblem(moreScopes, 403, 'insufficient_scope'));
    const created = await post(limited, clients, { name: 'svc', scopes: ['memory:recall', 'project:write'] });
    assert.equal(created.status, 201, created.text);
    const client = obj(created.body);
    assert.deepEqual(client['banks'], ['b1']);
    assert.equal(client['expires_at'], expiry);

    const [id, secret] = [String(client['client_id']), String(client['client_secret'])];
    const at = await clientToken(h.url, id, secret, 'memory:recall project:write');
    assert.equal((await recall(at, 'b1', { query: 'office' })).status, 200);
    assert.ok(isProblem(await recall(at, 'b2', { query: 'x' }), 403, 'forbidden'));
    const viaToken = await post(at, '/v1/me/keys', {});
    assert.equal(viaToken.status, 201, viaToken.text);
    assert.deepEqual(obj(viaToken.body)['banks'], ['b1']);
    assert.equal(obj(viaToken.body)['expires_at'], expiry);
    assert.ok(isProblem(await post(at, '/v1/me/keys', { banks: ['b2'] }), 403, 'forbidden'));
  });

  it('a limited key lists and revokes only keys and clients within its own limits', async () => {
    const limited = await adminKey({ scopes: ['project:write', 'memory:recall'], banks: ['b1'] });
    const wide = await adminKey({ scopes: ['project:write', 'memory:recall'] });
    const ids = async (token: string, path: string, field: string): Promise<string[]> => {
      const res = await get(token, path);
      assert.equal(res.status, 200, res.text);
      return (obj(res.body)['items'] as Json[]).map((item) => String(item[field]));
    };
    const keyIds = (token: string): Promise<string[]> => ids(token, '/v1/me/keys', 'id');
    const allKeys = await call(h.url, 'GET', `/admin/projects/${owner.projectId}/keys`, { token: ADMIN_TOKEN });
    const wideRow = (obj(allKeys.body)['items'] as Json[]).find((k) => wide.startsWith(String(k['prefix'])));
    assert.ok(wideRow !== undefined, allKeys.text);
    const wideKeyId = String(wideRow['id']);

    const child = await post(limited, '/v1/me/keys', {});
    assert.equal(child.status, 201, child.text);
    const childId = String(obj(child.body)['id']);
    const seen = await keyIds(limited);
    assert.ok(seen.includes(childId), 'its own narrower key is listed');
    assert.ok(!seen.includes(wideKeyId), 'a key with no bank limit is not listed');
    assert.ok((await keyIds(wide)).includes(wideKeyId));

    const refused = await call(h.url, 'DELETE', `/v1/me/keys/${wideKeyId}`, { token: limited });
    assert.ok(isProblem(refused, 403, 'forbidden'), refused.text);
    assert.match(String(obj(refused.body)['detail']), /grants more than this credential holds/);
    assert.equal((await recall(wide, 'b2', { query: 'x' })).status, 200, 'the wider key still works');
    assert.equal((await call(h.url, 'DELETE', `/v1/me/keys/${childId}`, { token: limited })).status, 200);

    const clients = '/v1/me/oauth/clients';
    const wideClient = await post(wide, clients, { name: 'wide', scopes: ['memory:recall'] });
    assert.equal(wideClient.status, 201, wideClient.text);
    const wideClientId = String(obj(wideClient.body)['client_id']);
    assert.ok(!(await ids(limited, clients, 'client_id')).includes(wideClientId));
    const keep = await call(h.url, 'DELETE', `${clients}/${wideClientId}`, { token: limited });
    assert.ok(isProblem(keep, 403, 'forbidden'), keep.text);
    assert.equal((await call(h.url, 'DELETE', `${clients}/${wideClientId}`, { token: wide })).status, 200);
  });

  it('MCP list_banks shows a limited key only its banks and spaces', async () => {
    const listBanks = async (key: string): Promise<string[]> => {
      const res = await tool(key, 1, 'list_banks', {});
      assert.equal(res.status, 200, res.text);
      return ((toolData(res.text)['banks'] as Json[] | undefined) ?? []).map((b) => String(b['bank_id'])).sort();
    };
    assert.deepEqual(await listBanks(owner.key), ['b1', 'b2', 'b3']);
    assert.deepEqual(await listBanks(await adminKey({ banks: ['b1'] })), ['b1']);
    assert.deepEqual(await listBanks(await adminKey({ spaces: ['acme'] })), ['b3']);
    const rest = await get(await adminKey({ spaces: ['acme'] }), '/v1/me/banks');
    assert.deepEqual(
      (obj(rest.body)['banks'] as Json[]).map((b) => b['bank_id']),
      ['b3'],
    );
  });

  it("a bank-limited key reads a space's org memory only when it holds org:<space>", async () => {
    const banked = await adminKey({ banks: ['b1'] });
    const orgRecall = '/v1/me/spaces/acme/memories/recall';
    assert.ok(isProblem(await post(banked, orgRecall, { query: 'badges' }), 403, 'forbidden'));
    const blended = await recall(banked, 'b1', { query: 'badges', space: 'acme', include_org: true });
    assert.ok(isProblem(blended, 403, 'forbidden'), blended.text);
    assert.match(String(obj(blended.body)['detail']), /org:acme/);
    const mcp = await tool(banked, 1, 'recall', { bank_id: 'b1', query: 'badges', space: 'acme', include_org: true });
    assert.ok(isProblem(mcp, 403, 'forbidden'), mcp.text);
    assert.equal((await recall(banked, 'b1', { query: 'office' })).status, 200);

    const org = await post(await adminKey({ banks: ['b1', 'org:acme'] }), orgRecall, { query: 'badges' });
    assert.equal(org.status, 200, org.text);
    assert.match(org.text, /badges at all times/);
  });

  it("a bank-limited key cannot read another bank's operation status", async () => {
    const path = `/v1/me/operations/${operationId}`;
    const own = await get(await adminKey({ banks: ['b2'] }), path);
    assert.equal(own.status, 200, own.text);
    assert.equal(obj(own.body)['bank_id'], 'b2');
    const other = await get(await adminKey({ banks: ['b1'] }), path);
    assert.ok(isProblem(other, 404), other.text);
    assert.ok(!other.text.includes('"b2"') && !other.text.includes('bank_id'), other.text);
    assert.ok(isProblem(await get(await adminKey({ spaces: ['acme'] }), path), 404));
  });

  it('MCP tool calls that fail use no quota; successful ones do', async () => {
    const { key, projectId } = await setupProject(h.url, { scopes: ['mcp', 'memory:recall', 'memory:reflect'] });
    // Reflect needs an LLM, which this engine lacks: the tool answers an error (HTTP 200, isError).
    const failed = await tool(key, 1, 'reflect', { bank_id: 'b1', query: 'where?' });
    assert.equal(failed.status, 200, failed.text);
    assert.equal(obj(rpcAnswer(failed.text)['result'])['isError'], true);
    const batch = await call(h.url, 'POST', '/mcp', {
      token: key,
      headers: MCP_HEADERS,
      body: [
        rpc(2, 'tools/call', { name: 'recall', arguments: { bank_id: 'b1', query: 'office' } }),
        rpc(3, 'tools/call', { name: 'recall', arguments: { bank_id: 'b1', query: '' } }),
      ],
    });
    assert.equal(batch.status, 200, batch.text);
    const usage = obj((await get(ADMIN_TOKEN, `/admin/projects/${projectId}/usage`)).body);
    assert.deepEqual(usage['reflects'], { used: 0, limit: 100 });
    assert.deepEqual(usage['recalls'], { used: 1, limit: 5000 });
  });

  it('a usage report includes the counts a flush is writing at that moment', async () => {
    const { key, projectId } = await setupProject(h.url, { scopes: ['memory:recall', 'project:read'] });
    assert.equal((await recall(key, 'b1', { query: 'office' })).status, 200);
    // Hold the counter's row so the flush below stays in flight until the lock is let go.
    const locker = new pg.Client({ connectionString: h.db.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT * FROM usage_counters WHERE project_id = $1 FOR UPDATE', [projectId]);
      const flushing = h.gw.flushQuotas();
      const report = get(key, '/v1/me/usage');
      setTimeout(() => {
        void locker.query('COMMIT');
      }, 300);
      await flushing;
      assert.deepEqual(obj((await report).body)['recalls'], { used: 1, limit: 5000 });
    } finally {
      await locker.end();
    }
  });

  it('throttles wrong admin tokens per address, not the right token from another address', async () => {
    const wrong = 'not-the-admin-token-0123456789';
    const create = (from: string, token: string): ReturnType<typeof callFrom> =>
      callFrom(from, h.url, '/admin/projects', token, { name: 'x' });
    for (let i = 0; i < 10; i++) assert.equal((await create('127.0.0.2', wrong)).status, 401, `attempt ${i + 1}`);
    const limited = await create('127.0.0.2', wrong);
    assert.equal(limited.status, 429);
    assert.equal(limited.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(limited.body['code'], 'rate_limited');
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    assert.equal(
      (await create('127.0.0.2', ADMIN_TOKEN)).status,
      429,
      'the throttled address is refused before its token is compared',
    );
    assert.equal((await create('127.0.0.1', ADMIN_TOKEN)).status, 201);
  });
});
