// Forwarding to a real engine: memory paths, isolation between projects, bank/space limits, quotas under
// concurrency, rate limits, engine failures not counted.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PLANS } from '@mnemos/gateway';
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
} from './helpers.js';

describe('gateway in front of a real engine', () => {
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

  it('retains and recalls through /v1/me and the description-level paths, with X-Quota headers', async () => {
    const { key, projectId } = await setupProject(h.url);
    const r1 = await call(h.url, 'POST', '/v1/me/banks/alice%40example.com/memories', {
      token: key,
      body: { content: 'Alice prefers green tea in the morning.' },
    });
    assert.equal(r1.status, 200, r1.text);
    assert.equal(obj(r1.body)['bank_id'], 'alice@example.com');
    assert.equal(r1.headers.get('x-quota-metric'), 'memories');
    assert.equal(r1.headers.get('x-quota-limit'), '1000');
    assert.equal(r1.headers.get('x-quota-used'), '1');
    assert.equal(r1.headers.get('x-quota-remaining'), '999');
    assert.ok(r1.headers.get('x-quota-reset'));
    const r2 = await call(h.url, 'POST', '/v1/retain', {
      token: key,
      body: {
        bank_id: 'alice@example.com',
        items: [{ content: 'Alice lives in Lisbon.' }, { content: 'Alice has a cat named Miso.' }],
      },
    });
    assert.equal(r2.status, 200, r2.text);
    assert.equal(r2.headers.get('x-quota-used'), '3');
    const rec = await call(h.url, 'POST', '/v1/me/banks/alice%40example.com/memories/recall', {
      token: key,
      body: { query: 'What does Alice drink?' },
    });
    assert.equal(rec.status, 200, rec.text);
    const results = obj(rec.body)['results'] as Json[];
    assert.ok(results.length > 0);
    assert.match(String(results[0]?.['text']), /green tea/);
    const top = await call(h.url, 'POST', '/v1/recall', {
      token: key,
      body: { bank_id: 'alice@example.com', query: 'Where does Alice live?' },
    });
    assert.equal(top.status, 200, top.text);
    assert.ok((obj(top.body)['results'] as Json[]).some((r) => /Lisbon/.test(String(r['text']))));
    const list = await call(h.url, 'GET', '/v1/me/banks/alice%40example.com/memories?limit=10', { token: key });
    assert.equal(list.status, 200, list.text);
    assert.equal(obj(list.body)['total'], 3);
    const banks = await call(h.url, 'GET', '/v1/me/banks', { token: key });
    assert.equal(banks.status, 200, banks.text);
    const usage = await call(h.url, 'GET', '/v1/me/usage', { token: key });
    assert.deepEqual(obj(usage.body)['memories'], { used: 3, limit: 1000 });
    assert.deepEqual(obj(usage.body)['recalls'], { used: 2, limit: 1000 * 5 });
    const admin = await call(h.url, 'GET', `/admin/projects/${projectId}/usage`, { token: ADMIN_TOKEN });
    assert.deepEqual(admin.body, usage.body);
    // Hindsight clients' /v1/default/... paths resolve to the caller's project as well.
    const hs = await call(h.url, 'POST', '/v1/default/banks/alice%40example.com/memories/recall', {
      token: key,
      body: { query: 'cat' },
    });
    assert.equal(hs.status, 200, hs.text);
    assert.ok((obj(hs.body)['results'] as Json[]).some((r) => /Miso/.test(String(r['text']))));
    // An OAuth client-credentials token reaches the same project's memory.
    const client = await call(h.url, 'POST', `/admin/projects/${projectId}/oauth/clients`, {
      token: ADMIN_TOKEN,
      body: { name: 'svc', scopes: ['memory:recall'] },
    });
    const { client_id: cid, client_secret: secret } = obj(client.body) as { client_id: string; client_secret: string };
    const tokenRes = await fetch(`${h.url}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${cid}:${secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials&scope=memory%3Arecall',
    });
    const at = String(obj(await tokenRes.json())['access_token']);
    const viaToken = await call(h.url, 'POST', '/v1/recall', {
      token: at,
      body: { bank_id: 'alice@example.com', query: 'Where does Alice live?' },
    });
    assert.equal(viaToken.status, 200, viaToken.text);
    assert.ok((obj(viaToken.body)['results'] as Json[]).some((r) => /Lisbon/.test(String(r['text']))));
  });

  it("isolates projects: B never reads, writes, lists, counts or learns of A's banks", async () => {
    const a = await setupProject(h.url, { name: 'A' });
    const b = await setupProject(h.url, { name: 'B' });
    const ra = await call(h.url, 'POST', '/v1/me/banks/secret-a/memories', {
      token: a.key,
      body: { content: 'Project A launch code is 7741.' },
    });
    assert.equal(ra.status, 200, ra.text);
    const memoryId = String((obj(ra.body)['memory_ids'] as string[])[0]);
    await call(h.url, 'POST', '/v1/me/banks/shared-name/memories', {
      token: a.key,
      body: { content: 'A: the shared bank holds the launch code 7741.' },
    });

    // What B sees for A's bank must be exactly what B sees for a bank that exists nowhere.
    const never = 'never-existed-bank';
    const pairs: Array<[string, string, unknown?]> = [
      ['GET', '/v1/me/banks/{bank}'],
      ['GET', '/v1/me/banks/{bank}/memories'],
      ['GET', `/v1/me/banks/{bank}/memories/${memoryId}`],
      ['PATCH', `/v1/me/banks/{bank}/memories/${memoryId}`, { text: 'hijacked' }],
      ['DELETE', `/v1/me/banks/{bank}/memories/${memoryId}`],
    ];
    for (const [method, p, body] of pairs) {
      const probe = await call(h.url, method, p.replace('{bank}', 'secret-a'), { token: b.key, body });
      const control = await call(h.url, method, p.replace('{bank}', never), { token: b.key, body });
      assert.equal(probe.status, control.status, `${method} ${p}: ${probe.text} vs ${control.text}`);
      assert.equal(obj(probe.body)['code'], obj(control.body)['code']);
      assert.equal(obj(probe.body)['total'], obj(control.body)['total']);
      assert.ok(!probe.text.includes('7741'));
    }
    const recall = await call(h.url, 'POST', '/v1/me/banks/secret-a/memories/recall', {
      token: b.key,
      body: { query: 'launch code' },
    });
    assert.equal(recall.status, 200);
    assert.deepEqual(obj(recall.body)['results'], []);
    const viaTop = await call(h.url, 'POST', '/v1/recall', {
      token: b.key,
      body: { bank_id: 'shared-name', query: 'launch code' },
    });
    assert.deepEqual(obj(viaTop.body)['results'], []);
    const banks = await call(h.url, 'GET', '/v1/me/banks', { token: b.key });
    assert.equal(obj(banks.body)['total'], 0);
    assert.ok(!banks.text.includes('secret-a'));

    // B writing to "A's" bank name through /v1/retain lands in B's own project.
    const wb = await call(h.url, 'POST', '/v1/retain', {
      token: b.key,
      body: { bank_id: 'secret-a', content: 'B wrote this.' },
    });
    assert.equal(wb.status, 200, wb.text);
    const aList = await call(h.url, 'GET', '/v1/me/banks/secret-a/memories', { token: a.key });
    assert.equal(obj(aList.body)['total'], 1);
    assert.ok(!aList.text.includes('B wrote this'));
    const aMem = await call(h.url, 'GET', `/v1/me/banks/secret-a/memories/${memoryId}`, { token: a.key });
    assert.equal(aMem.status, 200, aMem.text);
    assert.match(aMem.text, /7741/);

    // Usage is per project.
    const ua = obj((await call(h.url, 'GET', '/v1/me/usage', { token: a.key })).body);
    const ub = obj((await call(h.url, 'GET', '/v1/me/usage', { token: b.key })).body);
    assert.equal(obj(ua['memories'])['used'], 2);
    assert.equal(obj(ub['memories'])['used'], 1);
    // B's key management never shows A's keys; A's key ids cannot be revoked by B.
    const aKeys = await call(h.url, 'GET', `/admin/projects/${a.projectId}/keys`, { token: ADMIN_TOKEN });
    const aKeyId = String(((obj(aKeys.body)['items'] as Json[])[0] ?? {})['id']);
    assert.ok(isProblem(await call(h.url, 'DELETE', `/v1/me/keys/${aKeyId}`, { token: b.key }), 404));
    assert.equal((await call(h.url, 'GET', '/v1/me/usage', { token: a.key })).status, 200);
    // Path tricks cannot reach another tenant.
    for (const p of [
      `/v1/me/banks/..%2F..%2F${a.projectId}%2Fbanks%2Fsecret-a/memories`,
      '/v1/me/banks/../memories',
      `/v1/${a.projectId}/banks/secret-a/memories`,
    ]) {
      const res = await call(h.url, 'GET', p, { token: b.key });
      assert.ok(res.status >= 400 && res.status < 500, `${p}: ${res.status}`);
      assert.ok(!res.text.includes('7741'));
    }
  });

  it('refuses a list cursor outside the project, bank and filters that gave it, and pages on with it there', async () => {
    const a = await setupProject(h.url, { name: 'cursor A' });
    const b = await setupProject(h.url, { name: 'cursor B' });
    for (const [key, bank] of [
      [a.key, 'notes'],
      [a.key, 'other-notes'],
      [b.key, 'notes'],
    ] as const) {
      const r = await call(h.url, 'POST', `/v1/me/banks/${bank}/memories`, {
        token: key,
        body: { items: [{ content: `First ${bank} note.` }, { content: `Second ${bank} note.` }] },
      });
      assert.equal(r.status, 200, r.text);
    }
    const first = await call(h.url, 'GET', '/v1/me/banks/notes/memories?limit=1', { token: a.key });
    const cursor = encodeURIComponent(String(obj(first.body)['next_cursor']));
    const refusals: Array<[string, string]> = [
      [b.key, `/v1/me/banks/notes/memories?limit=1&cursor=${cursor}`],
      [a.key, `/v1/me/banks/other-notes/memories?limit=1&cursor=${cursor}`],
      [a.key, `/v1/me/banks/notes/memories?limit=1&q=second&cursor=${cursor}`],
    ];
    for (const [token, path] of refusals) {
      const r = await call(h.url, 'GET', path, { token });
      assert.ok(isProblem(r, 400, 'validation_failed'), `${path}: ${r.text}`);
      assert.equal(obj((obj(r.body)['errors'] as Json[])[0])['pointer'], '/query/cursor');
    }
    const next = await call(h.url, 'GET', `/v1/me/banks/notes/memories?limit=1&cursor=${cursor}`, { token: a.key });
    assert.equal(next.status, 200, next.text);
    assert.equal((obj(next.body)['items'] as Json[]).length, 1);

    const banks = await call(h.url, 'GET', '/v1/me/banks?limit=1', { token: a.key });
    const bankCursor = encodeURIComponent(String(obj(banks.body)['next_cursor']));
    const elsewhere = await call(h.url, 'GET', `/v1/me/banks?limit=1&cursor=${bankCursor}`, { token: b.key });
    assert.ok(isProblem(elsewhere, 400, 'validation_failed'), elsewhere.text);
    const own = await call(h.url, 'GET', `/v1/me/banks?limit=1&cursor=${bankCursor}`, { token: a.key });
    assert.equal(own.status, 200, own.text);
    assert.notDeepEqual(obj(own.body)['banks'], obj(banks.body)['banks']);
  });

  it('limits keys to their banks and spaces', async () => {
    const owner = await setupProject(h.url);
    await call(h.url, 'POST', '/v1/me/banks/b1/memories', {
      token: owner.key,
      body: { content: 'In space acme: the office is in Porto.', space: 'acme' },
    });
    await call(h.url, 'POST', '/v1/me/banks/b2/memories', { token: owner.key, body: { content: 'Bank two memory.' } });
    const banked = await call(h.url, 'POST', `/admin/projects/${owner.projectId}/keys`, {
      token: ADMIN_TOKEN,
      body: { banks: ['b1'] },
    });
    const bk = String(obj(banked.body)['key']);
    assert.equal(
      (
        await call(h.url, 'POST', '/v1/me/banks/b1/memories/recall', {
          token: bk,
          body: { query: 'office', space: 'acme' },
        })
      ).status,
      200,
    );
    assert.ok(
      isProblem(
        await call(h.url, 'POST', '/v1/me/banks/b2/memories/recall', { token: bk, body: { query: 'x' } }),
        403,
        'forbidden',
      ),
    );
    assert.ok(
      isProblem(await call(h.url, 'POST', '/v1/recall', { token: bk, body: { bank_id: 'b2', query: 'x' } }), 403),
    );
    const listed = await call(h.url, 'GET', '/v1/me/banks', { token: bk });
    assert.equal(listed.status, 200, listed.text);
    assert.ok(!listed.text.includes('"b2"'), listed.text);

    const spaced = await call(h.url, 'POST', `/admin/projects/${owner.projectId}/keys`, {
      token: ADMIN_TOKEN,
      body: { spaces: ['acme'] },
    });
    const sk = String(obj(spaced.body)['key']);
    const ok = await call(h.url, 'POST', '/v1/me/banks/b1/memories/recall', {
      token: sk,
      body: { query: 'office', space: 'acme' },
    });
    assert.equal(ok.status, 200);
    assert.ok((obj(ok.body)['results'] as Json[]).length > 0);
    assert.ok(
      isProblem(await call(h.url, 'POST', '/v1/me/banks/b2/memories/recall', { token: sk, body: { query: 'x' } }), 403),
    );
    assert.ok(
      isProblem(
        await call(h.url, 'POST', '/v1/me/banks/b1/memories', { token: sk, body: { content: 'x', space: 'other' } }),
        403,
      ),
    );
    assert.ok(isProblem(await call(h.url, 'DELETE', '/v1/me/banks/b1', { token: sk }), 403));
    const listDefault = await call(h.url, 'GET', '/v1/me/banks/b2/memories', { token: sk });
    assert.ok(isProblem(listDefault, 403));
  });

  it('bulk get, update, export and import: each under its scope, an import counted like retains', async () => {
    const owner = await setupProject(h.url);
    const retainIn = async (content: string, space: string) =>
      String(
        (
          obj(
            (await call(h.url, 'POST', '/v1/me/banks/bulk/memories', { token: owner.key, body: { content, space } }))
              .body,
          )['memory_ids'] as string[]
        )[0],
      );
    const figs = await retainIn('Ivo likes figs.', 'default');
    const plums = await retainIn('Ivo likes plums.', 'acme');
    const keyWith = async (body: Json) =>
      String(
        obj((await call(h.url, 'POST', `/admin/projects/${owner.projectId}/keys`, { token: ADMIN_TOKEN, body })).body)[
          'key'
        ],
      );
    const reader = await keyWith({ scopes: ['memory:recall'] });
    const writer = await keyWith({ scopes: ['memory:retain'] });
    const acme = await keyWith({ spaces: ['acme'] });

    const got = await call(h.url, 'POST', '/v1/me/banks/bulk/memories/get', {
      token: reader,
      body: { ids: [figs, plums] },
    });
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(
      (obj(got.body)['items'] as Json[]).map((i) => i['found']),
      [true, true],
    );
    const spaced = await call(h.url, 'POST', '/v1/me/banks/bulk/memories/get', {
      token: acme,
      body: { ids: [figs, plums], space: 'acme' },
    });
    assert.deepEqual(
      (obj(spaced.body)['items'] as Json[]).map((i) => i['found']),
      [false, true],
      'a space-limited key reads in its own space only',
    );
    const outside = await call(h.url, 'POST', '/v1/me/banks/bulk/memories/get', { token: acme, body: { ids: [figs] } });
    assert.ok(isProblem(outside, 403), 'a space-limited key naming no space asks for `default`, outside its spaces');
    assert.ok(
      isProblem(
        await call(h.url, 'POST', '/v1/me/banks/bulk/memories/get', { token: writer, body: { ids: [figs] } }),
        403,
        'insufficient_scope',
      ),
    );
    const update = { ids: [figs, plums], set: { tags: ['fruit'] } };
    assert.ok(
      isProblem(
        await call(h.url, 'POST', '/v1/me/banks/bulk/memories/update', { token: reader, body: update }),
        403,
        'insufficient_scope',
      ),
    );
    const inAcme = await call(h.url, 'POST', '/v1/me/banks/bulk/memories/update', {
      token: acme,
      body: { ...update, space: 'acme' },
    });
    assert.equal(obj(inAcme.body)['updated_count'], 1);
    const updated = await call(h.url, 'POST', '/v1/me/banks/bulk/memories/update', { token: writer, body: update });
    assert.equal(obj(updated.body)['updated_count'], 2);
    const bad = await call(h.url, 'POST', '/v1/me/banks/bulk/memories/update', {
      token: writer,
      body: { ids: [figs] },
    });
    assert.ok(isProblem(bad, 400, 'validation_failed'));

    assert.ok(
      isProblem(await call(h.url, 'GET', '/v1/me/banks/bulk/export', { token: writer }), 403, 'insufficient_scope'),
    );
    const exported = await call(h.url, 'GET', '/v1/me/banks/bulk/export', { token: reader });
    assert.equal(exported.status, 200, exported.text);
    assert.equal(exported.headers.get('content-type'), 'application/x-ndjson');
    const lines = exported.text.split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 2);

    const target = await setupProject(h.url);
    const importBody = {
      raw: `${lines.join('\n')}\n\n{"text": ""}\n`,
      headers: { 'content-type': 'application/x-ndjson' },
    };
    assert.ok(
      isProblem(
        await call(h.url, 'POST', '/v1/me/banks/moved/import', { token: reader, ...importBody }),
        403,
        'insufficient_scope',
      ),
    );
    const imported = await call(h.url, 'POST', '/v1/me/banks/moved/import', { token: target.key, ...importBody });
    assert.equal(imported.status, 200, imported.text);
    assert.equal(obj(imported.body)['imported'], 2);
    assert.equal((obj(imported.body)['failed'] as Json[]).length, 1);
    const usage = await call(h.url, 'GET', '/v1/me/usage', { token: target.key });
    assert.deepEqual(
      obj(usage.body)['memories'],
      { used: 2, limit: 1000 },
      'the bad line reserved a unit and gave it back',
    );
    const moved = await call(h.url, 'POST', '/v1/me/banks/moved/memories/get', {
      token: target.key,
      body: { ids: [figs] },
    });
    assert.equal((obj(moved.body)['items'] as Json[])[0]?.['found'], true, 'the import keeps ids');
  });

  it("forwards a bank's entities under memory:recall, and a space-limited key sees only its space's", async () => {
    const owner = await setupProject(h.url);
    await call(h.url, 'POST', '/v1/me/banks/ents/memories', {
      token: owner.key,
      body: { content: 'Alice moved to Berlin.' },
    });
    await call(h.url, 'POST', '/v1/me/banks/ents/memories', {
      token: owner.key,
      body: { content: 'Bob moved to Oslo.', space: 'acme' },
    });
    const all = await call(h.url, 'GET', '/v1/me/banks/ents/entities?prefix=b', { token: owner.key });
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(
      (obj(all.body)['items'] as Json[]).map((e) => e['name']),
      ['Berlin', 'Bob'],
    );
    const alice = await call(h.url, 'GET', '/v1/me/banks/ents/entities/alice', { token: owner.key });
    assert.equal(alice.status, 200, alice.text);
    assert.equal(obj(alice.body)['name'], 'Alice');
    assert.ok(isProblem(await call(h.url, 'GET', '/v1/me/banks/ents/entities/Zed', { token: owner.key }), 404));
    assert.ok(isProblem(await call(h.url, 'GET', '/v1/me/banks/ents/entities?limit=0', { token: owner.key }), 400));

    const retainOnly = await call(h.url, 'POST', `/admin/projects/${owner.projectId}/keys`, {
      token: ADMIN_TOKEN,
      body: { scopes: ['memory:retain'] },
    });
    const rk = String(obj(retainOnly.body)['key']);
    for (const path of ['/v1/me/banks/ents/entities', '/v1/me/banks/ents/entities/Alice']) {
      assert.ok(isProblem(await call(h.url, 'GET', path, { token: rk }), 403, 'insufficient_scope'), path);
    }

    const spaced = await call(h.url, 'POST', `/admin/projects/${owner.projectId}/keys`, {
      token: ADMIN_TOKEN,
      body: { spaces: ['acme'] },
    });
    const sk = String(obj(spaced.body)['key']);
    assert.ok(isProblem(await call(h.url, 'GET', '/v1/me/banks/ents/entities', { token: sk }), 403));
    const inAcme = await call(h.url, 'GET', '/v1/me/banks/ents/entities?space=acme', { token: sk });
    assert.deepEqual(
      (obj(inAcme.body)['items'] as Json[]).map((e) => e['name']),
      ['Bob', 'Oslo'],
    );
    assert.ok(isProblem(await call(h.url, 'GET', '/v1/me/banks/ents/entities/Alice?space=acme', { token: sk }), 404));
  });

  it('stops exactly at the quota under 50 concurrent requests, counting no refused or failed request', async () => {
    const { key, projectId } = await setupProject(h.url, {
      quotas: { recalls: 20, memories: 10, requests_per_minute: 10_000 },
    });
    const recalls = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(h.url, 'POST', '/v1/me/banks/q/memories/recall', { token: key, body: { query: `question ${i}` } }),
      ),
    );
    assert.equal(recalls.filter((r) => r.status === 200).length, 20);
    const refused = recalls.filter((r) => r.status === 429);
    assert.equal(refused.length, 30);
    for (const r of refused) {
      assert.ok(isProblem(r, 429, 'quota_exceeded'));
      const b = obj(r.body);
      assert.equal(b['limit'], 20);
      assert.equal(b['used'], 20);
      assert.ok(typeof b['resets_at'] === 'string');
      assert.ok(Number(r.headers.get('retry-after')) > 0);
    }
    const retains = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(h.url, 'POST', '/v1/me/banks/q/memories', {
          token: key,
          body: { content: `Fact number ${i} about the quota test.` },
        }),
      ),
    );
    assert.equal(retains.filter((r) => r.status === 200).length, 10);
    assert.equal(retains.filter((r) => r.status === 429).length, 40);
    const list = await call(h.url, 'GET', '/v1/me/banks/q/memories?limit=100', { token: key });
    assert.equal(obj(list.body)['total'], 10, 'no retain over the quota reached the engine');
    // A batch that would cross the limit is refused whole.
    await call(h.url, 'PATCH', `/admin/projects/${projectId}`, {
      token: ADMIN_TOKEN,
      body: { quotas: { memories: 12 } },
    });
    const batch = await call(h.url, 'POST', '/v1/me/banks/q/memories', {
      token: key,
      body: { items: [{ content: 'x1' }, { content: 'x2' }, { content: 'x3' }] },
    });
    assert.ok(isProblem(batch, 429, 'quota_exceeded'));
    // Failed requests are not counted: reflect without an LLM fails at the engine.
    const reflect = await call(h.url, 'POST', '/v1/me/banks/q/reflect', { token: key, body: { query: 'what?' } });
    assert.ok(reflect.status >= 400, reflect.text);
    const usage = obj((await call(h.url, 'GET', `/admin/projects/${projectId}/usage`, { token: ADMIN_TOKEN })).body);
    assert.deepEqual(usage['recalls'], { used: 20, limit: 20 });
    assert.deepEqual(usage['memories'], { used: 10, limit: 12 });
    assert.deepEqual(usage['reflects'], { used: 0, limit: 100 });
    // Raising the quota takes effect at once.
    await call(h.url, 'PATCH', `/admin/projects/${projectId}`, {
      token: ADMIN_TOKEN,
      body: { plan: 'pro', quotas: { recalls: 21 } },
    });
    assert.equal(
      (await call(h.url, 'POST', '/v1/me/banks/q/memories/recall', { token: key, body: { query: 'again' } })).status,
      200,
    );
    // An override set to null is removed, and the plan's quota applies again; the other overrides stay.
    const cleared = await call(h.url, 'PATCH', `/admin/projects/${projectId}`, {
      token: ADMIN_TOKEN,
      body: { quotas: { recalls: null } },
    });
    assert.equal(cleared.status, 200, cleared.text);
    const planned = obj((await call(h.url, 'GET', `/admin/projects/${projectId}/usage`, { token: ADMIN_TOKEN })).body);
    assert.equal(obj(planned['recalls'])['limit'], PLANS['pro']?.recalls);
    assert.equal(obj(planned['memories'])['limit'], 12);
  });

  it('rate-limits per key with Retry-After', async () => {
    const { projectId } = await setupProject(h.url);
    const created = await call(h.url, 'POST', `/admin/projects/${projectId}/keys`, {
      token: ADMIN_TOKEN,
      body: { rate_limit_per_minute: 3 },
    });
    const key = String(obj(created.body)['key']);
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < 5; i++) {
      const r = await call(h.url, 'GET', '/v1/me/banks', { token: key });
      statuses.push(r.status);
      if (r.status === 429) limited = r;
    }
    assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
    assert.ok(limited !== undefined && isProblem(limited, 429, 'rate_limited'));
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
  });

  it('MCP reads that span every space when none is named need the space from a space-limited key', async () => {
    const owner = await setupProject(h.url);
    await call(h.url, 'POST', '/v1/me/banks/mcp-spaces/memories', {
      token: owner.key,
      body: { content: 'Ivy keeps the vault code.', space: 'secret' },
    });
    const limited = await call(h.url, 'POST', `/admin/projects/${owner.projectId}/keys`, {
      token: ADMIN_TOKEN,
      body: { spaces: ['default'] },
    });
    const lk = String(obj(limited.body)['key']);
    const headers = { accept: 'application/json, text/event-stream' };
    const toolCall = (name: string, args: Json) =>
      call(h.url, 'POST', '/mcp', {
        token: lk,
        headers,
        body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
      });
    for (const name of ['list_memories', 'entity']) {
      const unnamed = await toolCall(name, { bank_id: 'mcp-spaces' });
      assert.ok(isProblem(unnamed, 403, 'forbidden'), `${name}: ${unnamed.text}`);
      assert.ok(!unnamed.text.includes('Ivy'), unnamed.text);
      const named = await toolCall(name, { bank_id: 'mcp-spaces', space: 'default' });
      assert.equal(named.status, 200, named.text);
      assert.ok(!named.text.includes('Ivy'), named.text);
    }
  });

  it("serves MCP through the gateway with the mcp scope plus each tool's scope, counted against quotas", async () => {
    const { key, projectId } = await setupProject(h.url, { scopes: ['mcp', 'memory:retain', 'memory:recall'] });
    const headers = { accept: 'application/json, text/event-stream' };
    const rpcBody = (id: number, method: string, params: Json): Json => ({ jsonrpc: '2.0', id, method, params });
    const parse = (text: string): Json => {
      const data = text
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .pop();
      return obj(JSON.parse(data ?? text));
    };
    const init = await call(h.url, 'POST', '/mcp', {
      token: key,
      headers,
      body: rpcBody(1, 'initialize', {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'test', version: '1' },
      }),
    });
    assert.equal(init.status, 200, init.text);
    assert.ok(obj(parse(init.text)['result'])['serverInfo']);
    const session = init.headers.get('mcp-session-id');
    const h2 = session === null ? headers : { ...headers, 'mcp-session-id': session };
    const retained = await call(h.url, 'POST', '/mcp', {
      token: key,
      headers: h2,
      body: rpcBody(2, 'tools/call', {
        name: 'retain',
        arguments: { bank_id: 'mcp-bank', content: 'The MCP user likes sailing.' },
      }),
    });
    assert.equal(retained.status, 200, retained.text);
    assert.equal(retained.headers.get('x-quota-metric'), 'memories');
    const recalled = await call(h.url, 'POST', '/mcp', {
      token: key,
      headers: h2,
      body: rpcBody(3, 'tools/call', { name: 'recall', arguments: { bank_id: 'mcp-bank', query: 'hobby' } }),
    });
    assert.equal(recalled.status, 200, recalled.text);
    assert.match(JSON.stringify(parse(recalled.text)), /sailing/);
    const del = await call(h.url, 'POST', '/mcp', {
      token: key,
      headers: h2,
      body: rpcBody(4, 'tools/call', {
        name: 'delete_memory',
        arguments: { bank_id: 'mcp-bank', id: '0b8f8a36-1b7e-4a43-9d40-4d3b3f6fd111' },
      }),
    });
    assert.ok(isProblem(del, 403, 'insufficient_scope'));
    const usage = obj((await call(h.url, 'GET', `/admin/projects/${projectId}/usage`, { token: ADMIN_TOKEN })).body);
    assert.equal(obj(usage['memories'])['used'], 1);
    assert.equal(obj(usage['recalls'])['used'], 1);
    // The same bank through REST shows what MCP retained: one project, one tenant.
    const list = await call(h.url, 'GET', '/v1/me/banks/mcp-bank/memories', { token: key });
    assert.equal(obj(list.body)['total'], 1);
  });
});
