// Several gateway instances on one control plane: quotas leased in blocks stay exact across instances (no overshoot,
// no refusal while another instance sits on idle units, failed requests not counted), usage is exact after a flush,
// leases are returned at shutdown, and a revocation through one instance reaches the other.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { startGateway, type RunningGateway } from '@mnemos/gateway';
import {
  ADMIN_TOKEN,
  call,
  createTestDatabase,
  ENGINE_TOKEN,
  isProblem,
  KEY_LIFETIME_MS,
  obj,
  setupProject,
  startTestEngine,
  type EngineHandle,
  type TestDatabase,
} from './helpers.js';

function gatewayEnv(db: TestDatabase, engineUrl: string): Record<string, string> {
  return {
    GATEWAY_DATABASE_URL: db.url,
    GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
    GATEWAY_ENGINE_URL: engineUrl,
    GATEWAY_ENGINE_TOKEN: ENGINE_TOKEN,
    GATEWAY_PORT: '0',
    GATEWAY_HOST: '127.0.0.1',
    GATEWAY_LOG_LEVEL: 'silent',
    // The flush timer is slowed right down so that what the tests see comes from the explicit flushes.
    GATEWAY_QUOTA_FLUSH_MS: '60000',
  };
}

describe('several gateway instances on one control plane', () => {
  let engine: EngineHandle;
  let db: TestDatabase;
  let a: RunningGateway;
  let b: RunningGateway;
  let sql: pg.Client;
  before(async () => {
    engine = await startTestEngine();
    db = await createTestDatabase();
    a = await startGateway({ env: gatewayEnv(db, engine.url) });
    b = await startGateway({ env: gatewayEnv(db, engine.url) });
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  });
  after(async () => {
    await sql.end();
    await a.close();
    await b.close();
    await db.drop();
    await engine.close();
  });

  const counter = async (
    projectId: string,
    metric: string,
  ): Promise<{ used: number; leased: number; held: number }> => {
    const c = await sql.query<{ used: string; leased: string }>(
      'SELECT used, leased FROM usage_counters WHERE project_id = $1 AND metric = $2',
      [projectId, metric],
    );
    const l = await sql.query<{ held: string | null }>(
      'SELECT sum(units) AS held FROM quota_leases WHERE project_id = $1 AND metric = $2',
      [projectId, metric],
    );
    return {
      used: Number(c.rows[0]?.used ?? 0),
      leased: Number(c.rows[0]?.leased ?? 0),
      held: Number(l.rows[0]?.held ?? 0),
    };
  };

  it('stops exactly at the quota under 50 concurrent requests spread over two instances', async () => {
    const { key, projectId } = await setupProject(a.url, {
      quotas: { recalls: 20, memories: 10, requests_per_minute: 10_000 },
    });
    const recalls = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(i % 2 === 0 ? a.url : b.url, 'POST', '/v1/me/banks/q/memories/recall', {
          token: key,
          body: { query: `question ${i}` },
        }),
      ),
    );
    assert.equal(recalls.filter((r) => r.status === 200).length, 20);
    const refused = recalls.filter((r) => r.status === 429);
    assert.equal(refused.length, 30);
    for (const r of refused) assert.ok(isProblem(r, 429, 'quota_exceeded'));
    const retains = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(i % 2 === 0 ? b.url : a.url, 'POST', '/v1/me/banks/q/memories', {
          token: key,
          body: { content: `Fact number ${i} about two gateways.` },
        }),
      ),
    );
    assert.equal(retains.filter((r) => r.status === 200).length, 10);
    assert.equal(retains.filter((r) => r.status === 429).length, 40);
    const list = await call(a.url, 'GET', '/v1/me/banks/q/memories?limit=100', { token: key });
    assert.equal(obj(list.body)['total'], 10, 'no retain over the quota reached the engine');
    // Never more counted or leased than the limit, at any time.
    const rc = await counter(projectId, 'recalls');
    assert.ok(rc.used + rc.leased <= 20);
    assert.equal(rc.leased, rc.held, "usage_counters.leased is the sum of the instances' leases");
    // After both instances flushed, either one (and the admin API) reports the exact usage.
    await a.flushQuotas();
    await b.flushQuotas();
    for (const url of [a.url, b.url]) {
      const usage = obj((await call(url, 'GET', `/admin/projects/${projectId}/usage`, { token: ADMIN_TOKEN })).body);
      assert.deepEqual(usage['recalls'], { used: 20, limit: 20 });
      assert.deepEqual(usage['memories'], { used: 10, limit: 10 });
    }
    assert.deepEqual(await counter(projectId, 'recalls'), { used: 20, leased: 0, held: 0 });
  });

  it('refuses nobody while another instance holds idle units: they are reclaimed first', async () => {
    const { key, projectId } = await setupProject(a.url, { quotas: { recalls: 40, requests_per_minute: 10_000 } });
    const first = await call(a.url, 'POST', '/v1/me/banks/r/memories/recall', { token: key, body: { query: 'first' } });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.headers.get('x-quota-used'), '1');
    const held = await counter(projectId, 'recalls');
    assert.ok(held.leased > 1, 'instance A leased a block, not a single unit');
    // B needs the other 39; it gets those A leased but left idle.
    const rest = await Promise.all(
      Array.from({ length: 39 }, (_, i) =>
        call(b.url, 'POST', '/v1/me/banks/r/memories/recall', { token: key, body: { query: `q ${i}` } }),
      ),
    );
    assert.deepEqual(
      rest.map((r) => r.status).filter((s) => s !== 200),
      [],
    );
    for (const url of [a.url, b.url]) {
      const over = await call(url, 'POST', '/v1/me/banks/r/memories/recall', {
        token: key,
        body: { query: 'one too many' },
      });
      assert.ok(isProblem(over, 429, 'quota_exceeded'));
      assert.equal(obj(over.body)['used'], 40);
    }
    await b.flushQuotas();
    const usage = obj((await call(a.url, 'GET', '/v1/me/usage', { token: key })).body);
    assert.deepEqual(usage['recalls'], { used: 40, limit: 40 });
  });

  it('gives the units of failed requests back to the lease, and returns idle leases on flush', async () => {
    const { key, projectId } = await setupProject(a.url, {
      quotas: { reflects: 2, recalls: 100, requests_per_minute: 10_000 },
    });
    // Reflect without an LLM fails at the engine: never counted, so a limit of 2 never refuses the later ones.
    for (let i = 0; i < 4; i++) {
      const r = await call(a.url, 'POST', '/v1/me/banks/f/reflect', { token: key, body: { query: 'why?' } });
      assert.ok(r.status >= 400 && r.status !== 429, r.text);
    }
    const recall = await call(a.url, 'POST', '/v1/me/banks/f/memories/recall', { token: key, body: { query: 'x' } });
    assert.equal(recall.status, 200, recall.text);
    // A single instance reports its own usage exactly without waiting for the flush timer.
    const usage = obj((await call(a.url, 'GET', '/v1/me/usage', { token: key })).body);
    assert.deepEqual(usage['reflects'], { used: 0, limit: 2 });
    assert.deepEqual(usage['recalls'], { used: 1, limit: 100 });
    const before = await counter(projectId, 'recalls');
    assert.equal(before.used, 1);
    assert.ok(before.leased > 0, 'idle units are still leased to A before the flush');
    await a.flushQuotas();
    assert.deepEqual(await counter(projectId, 'reflects'), { used: 0, leased: 0, held: 0 });
    assert.deepEqual(await counter(projectId, 'recalls'), { used: 1, leased: 0, held: 0 });
  });

  it('returns leases and writes counts when an instance shuts down', async () => {
    const c = await startGateway({ env: gatewayEnv(db, engine.url) });
    const { key, projectId } = await setupProject(c.url, { quotas: { recalls: 1000, requests_per_minute: 10_000 } });
    for (let i = 0; i < 3; i++)
      assert.equal(
        (await call(c.url, 'POST', '/v1/me/banks/s/memories/recall', { token: key, body: { query: `s ${i}` } })).status,
        200,
      );
    assert.ok((await counter(projectId, 'recalls')).leased > 0);
    await c.close();
    assert.deepEqual(await counter(projectId, 'recalls'), { used: 3, leased: 0, held: 0 });
    const instances = await sql.query('SELECT id FROM gateway_instances');
    assert.equal(instances.rowCount, 2, 'the closed instance deregistered itself');
  });

  it('a key revoked through one instance is refused by the other (LISTEN/NOTIFY), expiry on every request', async () => {
    const { projectId } = await setupProject(a.url);
    const created = obj(
      (
        await call(a.url, 'POST', `/admin/projects/${projectId}/keys`, {
          token: ADMIN_TOKEN,
          body: { scopes: ['project:read', 'project:write'] },
        })
      ).body,
    );
    const key = String(created['key']);
    // Both instances have the key in their credential cache.
    assert.equal((await call(a.url, 'GET', '/v1/me/usage', { token: key })).status, 200);
    assert.equal((await call(b.url, 'GET', '/v1/me/usage', { token: key })).status, 200);
    const revoked = await call(a.url, 'DELETE', `/v1/me/keys/${String(created['id'])}`, { token: key });
    assert.equal(revoked.status, 200, revoked.text);
    assert.ok(
      isProblem(await call(a.url, 'GET', '/v1/me/usage', { token: key }), 401),
      'the revoking instance refuses at once',
    );
    // The other instance learns through the notification (milliseconds); poll rather than assume a delay, with a
    // deadline that holds on a loaded machine.
    let status = 0;
    for (const deadline = Date.now() + 30_000; status !== 401 && Date.now() < deadline;) {
      status = (await call(b.url, 'GET', '/v1/me/usage', { token: key })).status;
      if (status !== 401) await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(status, 401);
    // Expiry needs no notification: the cached row's expires_at is checked on every request.
    // The key must still be valid for the first call (create and use it, even on a loaded machine), then expire.
    const soon = new Date(Date.now() + KEY_LIFETIME_MS).toISOString();
    const exp = obj(
      (
        await call(a.url, 'POST', `/admin/projects/${projectId}/keys`, {
          token: ADMIN_TOKEN,
          body: { expires_at: soon, scopes: ['project:read'] },
        })
      ).body,
    );
    const expKey = String(exp['key']);
    assert.equal((await call(b.url, 'GET', '/v1/me/usage', { token: expKey })).status, 200);
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(soon) - Date.now()) + 50));
    const expired = await call(b.url, 'GET', '/v1/me/usage', { token: expKey });
    assert.ok(isProblem(expired, 401));
    assert.match(String(obj(expired.body)['detail']), /expired/);
  });
});
