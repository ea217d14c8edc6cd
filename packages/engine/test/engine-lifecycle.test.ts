// test-runner: long (started first, so the suite does not wait for it at the end)
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { call, tempHome, testEnv } from './helpers/engine.js';
import { deadPid, runCliToEnd, spawnEngine, type EngineProcess } from './helpers/process.js';

const KEY = Buffer.alloc(32, 3).toString('base64');
const NEW_KEY = Buffer.alloc(32, 4).toString('base64');

// A second engine that wrongly starts would serve until killed: the timeout turns that into a failure, not a hang.
describe('one process per embedded database, and a clean stop', { timeout: 300_000 }, () => {
  const home = tempHome();
  const env = testEnv(home.path, { MNEMOS_API_ENCRYPTION_MASTER_KEY: KEY, MNEMOS_API_LOG_LEVEL: 'info' });
  let first: EngineProcess;
  const acknowledged: string[] = [];

  before(async () => {
    first = await spawnEngine(env);
  });
  after(async () => {
    await first?.stop('SIGKILL');
    home.remove();
  });

  it('a second engine on the same home fails at once, naming the holder and what to do', async () => {
    const r = await runCliToEnd(['serve'], env);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`in use by another Mnemos process \\(pid ${first.child.pid}, since `));
    assert.match(r.stderr, /stop that engine first.*MNEMOS_API_DATABASE_URL/);
  });

  it('rotate-key and encrypt-existing fail while the engine serves, and change nothing', async () => {
    const rotate = await runCliToEnd(['rotate-key'], { ...env, MNEMOS_API_ENCRYPTION_NEW_MASTER_KEY: NEW_KEY });
    assert.equal(rotate.code, 1, rotate.stdout + rotate.stderr);
    assert.match(rotate.stderr, new RegExp(`pid ${first.child.pid}`));
    assert.doesNotMatch(rotate.stdout, /re-wrapped/);
    const encrypt = await runCliToEnd(['encrypt-existing'], env);
    assert.equal(encrypt.code, 1);
    assert.match(encrypt.stderr, new RegExp(`pid ${first.child.pid}`));
  });

  it('SIGTERM during a burst of retains exits 0 within 10 s and loses no acknowledged write', async () => {
    const first200 = await call<{ memory_ids: string[] }>(first.url, 'POST', '/v1/default/banks/burst/memories', {
      content: 'The first engine still serves.',
    });
    assert.equal(first200.status, 200);
    acknowledged.push(...first200.body.memory_ids);

    let sent = 0;
    const writer = async () => {
      for (;;) {
        const n = sent++;
        try {
          const r = await call<{ memory_ids: string[] }>(first.url, 'POST', '/v1/default/banks/burst/memories', {
            content: `Burst note ${n}: the courier left parcel ${n} at door ${n % 7}.`,
          });
          if (r.status === 200) acknowledged.push(...r.body.memory_ids);
          else if (r.status === 503) return;
          else assert.fail(`unexpected ${r.status}: ${JSON.stringify(r.body)}`);
        } catch {
          return; // the connection closed: the engine stopped
        }
      }
    };
    const writers = Array.from({ length: 4 }, writer);
    // SIGTERM once the burst is under way (a count of answers, not a clock).
    while (acknowledged.length < 12) await new Promise((resolve) => setTimeout(resolve, 20));
    const stopAt = Date.now();
    const exitCode = await first.stop('SIGTERM');
    const stoppedIn = Date.now() - stopAt;
    await Promise.all(writers);
    assert.equal(exitCode, 0, first.output());
    assert.ok(stoppedIn < 10_000, `stopped in ${stoppedIn} ms`);
    assert.match(first.output(), /SIGTERM received; stopping/);
    assert.equal(existsSync(join(home.path, 'db.lock')), false, 'the lock is released');
  });

  it('a restart takes over a lock left by a dead process and finds every acknowledged write', async () => {
    const stale = { pid: deadPid(), processStart: '1', since: '2020-01-01T00:00:00.000Z' };
    writeFileSync(join(home.path, 'db.lock'), JSON.stringify(stale));
    const again = await spawnEngine(env);
    try {
      const path = '/v1/default/banks/burst/memories?limit=1000';
      const listed = await call<{ items: Array<{ id: string }> }>(again.url, 'GET', path);
      assert.equal(listed.status, 200);
      const ids = new Set(listed.body.items.map((m) => m.id));
      const missing = acknowledged.filter((id) => !ids.has(id));
      assert.deepEqual(missing, [], `${missing.length} of ${acknowledged.length} acknowledged memories are missing`);
    } finally {
      assert.equal(await again.stop('SIGTERM'), 0);
    }
  });
});
