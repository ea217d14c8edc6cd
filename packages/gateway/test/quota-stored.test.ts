// test-runner: long (started first, so the suite does not wait for it at the end)
// Quotas count what the engine stores: memories after chunking, content already present not counted again, and
// retains the gateway gives up on (engine too slow) stay counted, so stored memories never exceed the quota.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  ADMIN_TOKEN,
  ENGINE_TOKEN,
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

/** Text that the engine cuts into many memories (paragraphs of about 1,000 characters). */
function longText(paragraphs: number, place = 'the harbour'): string {
  return Array.from(
    { length: paragraphs },
    (_, i) => `Paragraph ${i} about ${place}: ${'the ferry leaves at dawn and returns at dusk, '.repeat(22)}`,
  ).join('\n\n');
}

const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

/** An MCP tool call through the gateway. */
function mcpTool(h: Harness, key: string, name: string, args: Record<string, unknown>): Promise<Res> {
  return call(h.url, 'POST', '/mcp', {
    token: key,
    headers: MCP_HEADERS,
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
  });
}

/** The data of a successful tool result (tools answer JSON as text content). */
function toolData(res: Res): Record<string, unknown> {
  const result = obj(obj(res.body)['result']);
  assert.notEqual(result['isError'], true, res.text);
  const first = obj((result['content'] as unknown[] | undefined)?.[0]);
  return obj(JSON.parse(String(first['text'])) as unknown);
}

async function memoriesUsed(h: Harness, key: string): Promise<unknown> {
  const usage = await call(h.url, 'GET', '/v1/me/usage', { token: key });
  return obj(obj(usage.body)['memories'])['used'];
}

/** Memories stored in a project's bank, read from the engine itself. */
async function storedInEngine(engineUrl: string, tenant: string, bank: string): Promise<number> {
  const res = await fetch(`${engineUrl}/v1/${encodeURIComponent(tenant)}/banks/${bank}/memories?limit=1`, {
    headers: { authorization: `Bearer ${ENGINE_TOKEN}` },
  });
  return Number(obj(await res.json())['total'] ?? NaN);
}

async function tenantOf(h: Harness, projectId: string): Promise<string> {
  const row = await h.gw.app.inject({
    method: 'GET',
    url: `/admin/projects/${projectId}`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  return String(obj(row.json())['tenant'] ?? obj(obj(row.json())['project'])['tenant']);
}

/** An engine stand-in that passes every request to the real engine at once but holds the answer back `delayMs`. */
function slowFront(engineUrl: string, delayMs: number): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) {
        if (typeof v === 'string' && k !== 'host' && k !== 'connection') headers[k] = v;
      }
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      void fetch(`${engineUrl}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, body }).then(
        async (answer) => {
          const text = await answer.text();
          setTimeout(() => {
            if (res.destroyed) return;
            const type = answer.headers.get('content-type') ?? 'application/json';
            res.writeHead(answer.status, { 'content-type': type }).end(text);
          }, delayMs);
        },
      );
    });
  });
  return new Promise((done) =>
    server.listen(0, '127.0.0.1', () => {
      done({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server });
    }),
  );
}

describe('quotas count what the engine stores', () => {
  let engine: EngineHandle;
  let h: Harness;
  before(async () => {
    engine = await startTestEngine();
    h = await startHarness(engine.url);
  });
  after(async () => {
    await h.close();
    await engine.close();
  });

  it('a retain that chunks into more memories than the quota leaves is refused, and stores nothing', async () => {
    const { key, projectId } = await setupProject(h.url, { quotas: { memories: 2 } });
    const tenant = await tenantOf(h, projectId);
    const big = await call(h.url, 'POST', '/v1/me/banks/b/memories', { token: key, body: { content: longText(12) } });
    assert.ok(isProblem(big, 429, 'quota_exceeded'), big.text);
    assert.equal(await storedInEngine(engine.url, tenant, 'b'), 0);
    const items = [{ content: 'Ana sails on Sundays.' }, { content: 'Ana owns a red kayak.' }];
    const two = await call(h.url, 'POST', '/v1/me/banks/b/memories', { token: key, body: { items } });
    assert.equal(two.status, 200, two.text);
    assert.equal(two.headers.get('x-quota-used'), '2');
    const more = await call(h.url, 'POST', '/v1/me/banks/b/memories', {
      token: key,
      body: { content: 'Ana lives by the sea.' },
    });
    assert.ok(isProblem(more, 429, 'quota_exceeded'), more.text);
    assert.equal(await storedInEngine(engine.url, tenant, 'b'), 2);
  });

  it('counts chat messages like items: one memory each, refused when over the quota', async () => {
    const { key, projectId } = await setupProject(h.url, { quotas: { memories: 2 } });
    const tenant = await tenantOf(h, projectId);
    const turn = (content: string) => ({ role: 'user', name: 'Ana', content });
    const three = [turn('I sail on Sundays.'), turn('I own a red kayak.'), turn('I live by the sea.')];
    const over = await call(h.url, 'POST', '/v1/me/banks/m/memories', { token: key, body: { messages: three } });
    assert.ok(isProblem(over, 429, 'quota_exceeded'), over.text);
    assert.equal(await storedInEngine(engine.url, tenant, 'm'), 0);
    const two = await call(h.url, 'POST', '/v1/me/banks/m/memories', {
      token: key,
      body: { messages: three.slice(0, 2) },
    });
    assert.equal(two.status, 200, two.text);
    assert.equal(two.headers.get('x-quota-used'), '2');
    assert.equal((obj(two.body)['messages'] as unknown[]).length, 2);
  });

  it('counts the memories stored after chunking, and content already stored not again', async () => {
    const { key, projectId } = await setupProject(h.url, { quotas: { memories: 200 } });
    const tenant = await tenantOf(h, projectId);
    const res = await call(h.url, 'POST', '/v1/me/banks/c/memories', { token: key, body: { content: longText(6) } });
    assert.equal(res.status, 200, res.text);
    const stored = obj(res.body)['stored_count'];
    assert.equal(typeof stored, 'number');
    assert.ok(Number(stored) > 1, `long content becomes several memories (${String(stored)})`);
    assert.equal(res.headers.get('x-quota-used'), String(stored));
    const again = await call(h.url, 'POST', '/v1/me/banks/c/memories', { token: key, body: { content: longText(6) } });
    assert.equal(again.status, 200, again.text);
    assert.equal(obj(again.body)['stored_count'], 0);
    assert.equal(again.headers.get('x-quota-used'), String(stored));
    await h.gw.flushQuotas();
    const usage = await call(h.url, 'GET', '/v1/me/usage', { token: key });
    const counted = obj(obj(usage.body)['memories'])['used'];
    assert.equal(counted, stored);
    assert.equal(await storedInEngine(engine.url, tenant, 'c'), counted);
  });

  it('an MCP retain is charged what a REST retain is: long text over the quota is refused, naming the same need', async () => {
    const { key, projectId } = await setupProject(h.url, { quotas: { memories: 3 } });
    const tenant = await tenantOf(h, projectId);
    const text = longText(82);
    assert.ok(text.length > 85_000, String(text.length));
    const rest = await call(h.url, 'POST', '/v1/me/banks/e/memories', { token: key, body: { content: text } });
    assert.ok(isProblem(rest, 429, 'quota_exceeded'), rest.text);
    const needed = obj(rest.body)['requested'];
    assert.ok(Number(needed) > 3, rest.text);
    for (let i = 0; i < 3; i++) {
      const mcp = await mcpTool(h, key, 'retain', { bank_id: 'e', content: text });
      assert.ok(isProblem(mcp, 429, 'quota_exceeded'), mcp.text.slice(0, 300));
      assert.equal(obj(mcp.body)['requested'], needed);
    }
    assert.equal(await storedInEngine(engine.url, tenant, 'e'), 0);
    const short = await mcpTool(h, key, 'retain', { bank_id: 'e', content: 'Ana rows on Mondays.' });
    assert.equal(short.status, 200, short.text);
    assert.equal(toolData(short)['stored_count'], 1);
    assert.equal(short.headers.get('x-quota-used'), '1');
    assert.equal(await memoriesUsed(h, key), 1);
  });

  it('MCP and async retains count the memories their text becomes, as a REST retain does', async () => {
    const { key, projectId } = await setupProject(h.url, { quotas: { memories: 100 } });
    const tenant = await tenantOf(h, projectId);
    const rest = await call(h.url, 'POST', '/v1/me/banks/f/memories', { token: key, body: { content: longText(6) } });
    assert.equal(rest.status, 200, rest.text);
    const pieces = Number(obj(rest.body)['stored_count']);
    assert.ok(pieces > 1, rest.text);
    assert.equal(await memoriesUsed(h, key), pieces);

    const mcp = await mcpTool(h, key, 'retain', { bank_id: 'f', content: longText(6, 'the lighthouse') });
    assert.equal(toolData(mcp)['stored_count'], pieces);
    assert.equal(mcp.headers.get('x-quota-used'), String(2 * pieces));
    const again = await mcpTool(h, key, 'retain', { bank_id: 'f', content: longText(6, 'the lighthouse') });
    assert.equal(toolData(again)['stored_count'], 0);
    assert.equal(await memoriesUsed(h, key), 2 * pieces);

    const later = await call(h.url, 'POST', '/v1/me/banks/f/memories', {
      token: key,
      body: { content: longText(6, 'the quay'), async: true },
    });
    assert.equal(later.status, 200, later.text);
    assert.equal(later.headers.get('x-quota-used'), String(3 * pieces));
    const operation = `/v1/me/operations/${String(obj(later.body)['operation_id'])}`;
    for (let status = ''; status !== 'completed';) {
      const op = await call(h.url, 'GET', operation, { token: key });
      status = String(obj(op.body)['status']);
      assert.ok(status !== 'failed', op.text);
      if (status !== 'completed') await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(await storedInEngine(engine.url, tenant, 'f'), 3 * pieces);
    assert.equal(await memoriesUsed(h, key), 3 * pieces);
  });

  it('PATCH text is bounded to one memory: 1 MB is refused with a 400 that says to retain it; usage stays', async () => {
    const { key, projectId } = await setupProject(h.url, { quotas: { memories: 2 } });
    const tenant = await tenantOf(h, projectId);
    const items = [{ content: 'Ana mends nets.' }, { content: 'Ana paints boats.' }];
    const two = await call(h.url, 'POST', '/v1/me/banks/g/memories', { token: key, body: { items } });
    assert.equal(two.status, 200, two.text);
    const ids = obj(two.body)['memory_ids'] as string[];
    const memory = (id: string): string => `/v1/me/banks/g/memories/${id}`;
    const huge = `The harbour log. ${'x'.repeat(1_000_000)}`;
    for (const id of ids) {
      const edit = await call(h.url, 'PATCH', memory(id), { token: key, body: { text: huge } });
      assert.ok(isProblem(edit, 400, 'validation_failed'), edit.text.slice(0, 300));
      assert.match(String(obj(edit.body)['detail']), /1200 characters.*retain/);
    }
    const texts = await Promise.all(
      ids.map(async (id) => obj((await call(h.url, 'GET', memory(id), { token: key })).body)['text']),
    );
    assert.deepEqual(
      texts,
      items.map((i) => i.content),
    );
    const within = await call(h.url, 'PATCH', memory(ids[0]!), {
      token: key,
      body: { text: 'Ana mends nets at dawn.' },
    });
    assert.equal(within.status, 200, within.text);
    assert.equal(await storedInEngine(engine.url, tenant, 'g'), 2);
    assert.equal(await memoriesUsed(h, key), 2);
  });

  it('a retain abandoned on an engine timeout stays counted: stored memories never exceed the quota', async () => {
    const front = await slowFront(engine.url, 3_000);
    const slow = await startHarness(front.url, { GATEWAY_ENGINE_TIMEOUT_MS: '1000' });
    try {
      const { key, projectId } = await setupProject(slow.url, { quotas: { memories: 1 } });
      const tenant = await tenantOf(slow, projectId);
      const retain = (content: string): Promise<Res> =>
        call(slow.url, 'POST', '/v1/me/banks/d/memories', { token: key, body: { content } });
      const first = await retain('Bo keeps bees.');
      assert.ok(isProblem(first, 504, 'engine_timeout'), first.text);
      const second = await retain('Bo grows leeks.');
      assert.ok(isProblem(second, 429, 'quota_exceeded'), second.text);
      // The engine completed the abandoned retain; the count still holds it.
      assert.equal(await storedInEngine(engine.url, tenant, 'd'), 1);
      await slow.gw.flushQuotas();
      const usage = await call(slow.url, 'GET', '/v1/me/usage', { token: key });
      assert.equal(obj(obj(usage.body)['memories'])['used'], 1);
    } finally {
      await slow.close();
      front.server.closeAllConnections();
      await new Promise((r) => front.server.close(r));
    }
  });
});
