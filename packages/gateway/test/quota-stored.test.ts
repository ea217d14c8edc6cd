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
function longText(paragraphs: number): string {
  return Array.from(
    { length: paragraphs },
    (_, i) => `Paragraph ${i} about the harbour: ${'the ferry leaves at dawn and returns at dusk, '.repeat(22)}`,
  ).join('\n\n');
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
