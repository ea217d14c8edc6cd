// Expiry: `expires_at` on retain (items, messages, the body's default) and PATCH, and a bank's `retention_days`. A
// memory past its expiry is answered by no read (GET, list, recall on every tier, reflect) and the expiry job deletes
// it with its facts, on its schedule and when the engine starts again. The engine's clock is injected and moved by the
// tests, so nothing waits for real time to pass.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { recall } from '../src/recall/pipeline.js';
import { startEngine, type RunningEngine } from '../src/index.js';
import { recallOnTier } from './helpers/tier-recall.js';
import { call, retainOk, sharedLocalModel, tempHome, testEnv, type Retained } from './helpers/engine.js';
import { startFakeLlm, type FakeLlm } from './helpers/fake-llm.js';
import { operationCompleted } from './helpers/operations.js';
import { request } from './helpers/recall-facts.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const BANK = 'expiry';
const path = `/v1/default/banks/${BANK}/memories`;

/** The engine's clock: stands still until a test moves it. */
let nowMs = Date.parse('2031-03-01T12:00:00.000Z');
const clock = () => new Date(nowMs);
const iso = (ms: number) => new Date(ms).toISOString();

const home = tempHome('mnemos-expiry-');
let fake: FakeLlm;
let engine: RunningEngine;
let url: string;

interface Memory {
  id: string;
  text: string;
  source_id: string | null;
  expires_at: string | null;
}

/** Starts the engine on the test's home; the expiry job runs at start and then every `everyMs`. */
async function start(everyMs: number, llm = true): Promise<RunningEngine> {
  const env: Record<string, string> = llm
    ? {
        MNEMOS_API_LLM_PROVIDER: 'litellm',
        MNEMOS_API_LLM_MODEL: 'fake-model',
        MNEMOS_API_LLM_BASE_URL: fake.openaiBaseUrl,
      }
    : {};
  return startEngine({
    env: testEnv(home.path, env),
    engine: { clock, expiryEveryMs: everyMs, model: await sharedLocalModel() },
  });
}

const retain = (body: Record<string, unknown>, bank = BANK): Promise<Retained> => retainOk(url, bank, body);

const get = (id: string) => call<Memory>(url, 'GET', `${path}/${id}`);

async function listed(bank = BANK): Promise<Memory[]> {
  const r = await call<{ items: Memory[] }>(url, 'GET', `/v1/default/banks/${bank}/memories?limit=1000`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.items;
}

async function recalled(query: string): Promise<Memory[]> {
  const r = await call<{ results: Memory[] }>(url, 'POST', `${path}/recall`, { query, budget: 'high' });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.results;
}

const ids = (memories: readonly Memory[]) => memories.map((m) => m.id);

/** Rows of these ids still in the database, expired or not. */
async function stored(memoryIds: readonly string[]): Promise<string[]> {
  const rows = await engine.engine.db.query<{ id: string }>(
    'SELECT id::text AS id FROM memories WHERE id = ANY($1::uuid[])',
    [[...memoryIds]],
  );
  return rows.map((r) => r.id);
}

before(async () => {
  fake = await startFakeLlm();
  engine = await start(HOUR);
  url = engine.url;
});
after(async () => {
  await engine?.close();
  await fake?.stop();
  home.remove();
});

describe('expires_at', () => {
  let locker: string;
  let kept: string;

  it('is taken on items, messages and the body, answered on every memory, and null keeps a memory', async () => {
    const at = iso(nowMs + 2 * HOUR);
    const later = iso(nowMs + 3 * DAY);
    const r = await retain({
      items: [
        { content: 'The locker code of Maria is 4512.', expires_at: at },
        { content: 'Maria keeps her bike in the basement.', expires_at: null },
        { content: 'Maria parks on level two.' },
      ],
      messages: [{ role: 'user', name: 'Maria', content: 'My gym pass ends in spring.', expires_at: later }],
      expires_at: iso(nowMs + DAY),
    });
    [locker, kept] = r.ids as [string, string];
    const [, , parked, gym] = r.ids;
    assert.equal((await get(locker)).body.expires_at, at);
    assert.equal((await get(kept)).body.expires_at, null, 'null: kept, whatever the body says');
    assert.equal((await get(parked!)).body.expires_at, iso(nowMs + DAY), "the body's default");
    assert.equal((await get(gym!)).body.expires_at, later);
    assert.ok(ids(await listed()).includes(locker));
    assert.ok(ids(await recalled('What is the locker code of Maria?')).includes(locker));
  });

  it('recall on every tier leaves out a memory once it has expired, before the job deletes it', async () => {
    for (const tier of ['memory', 'compact', 'postgres'] as const) {
      const deps = recallOnTier(engine.engine, tier);
      const ask = async (now: number) => {
        const r = await recall(deps, request(BANK, 'What is the locker code of Maria?', { now: new Date(now) }));
        assert.equal(r.trace?.tier, tier);
        return r.results.map((h) => h.memory.id);
      };
      assert.ok((await ask(nowMs)).includes(locker), `${tier}: still current`);
      const expired = await ask(nowMs + 2 * HOUR);
      assert.ok(!expired.includes(locker), `${tier}: expired at its instant`);
      assert.ok(expired.includes(kept), `${tier}: the others stay`);
      // Validity choices do not bring it back: expiry forgets.
      const all = await recall(
        deps,
        request(BANK, 'locker code', { now: new Date(nowMs + 3 * HOUR), includeSuperseded: true }),
      );
      assert.ok(!all.results.some((h) => h.memory.id === locker), `${tier}: include_superseded`);
    }
    assert.deepEqual(await stored([locker]), [locker], 'still stored: reads alone leave it out');
  });

  it('GET answers 404, the list and recall leave it out, once the clock passes it', async () => {
    nowMs += 2 * HOUR;
    const gone = await get(locker);
    assert.equal(gone.status, 404);
    assert.match(gone.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.ok(!ids(await listed()).includes(locker));
    assert.ok(ids(await listed()).includes(kept));
    assert.ok(!ids(await recalled('What is the locker code of Maria?')).includes(locker));
    const superseded = await call<{ items: Memory[] }>(url, 'GET', `${path}?include_superseded=true`);
    assert.ok(!ids(superseded.body.items).includes(locker));
    const patched = await call(url, 'PATCH', `${path}/${locker}`, { expires_at: null });
    assert.equal(patched.status, 404, 'an expired memory cannot be brought back');
    const bulk = await call<{ items: Array<{ id: string; found: boolean }> }>(url, 'POST', `${path}/get`, {
      ids: [locker, kept],
    });
    assert.deepEqual(
      bulk.body.items.map((i) => i.found),
      [false, true],
      'a bulk get marks it missing',
    );
    const exported = await fetch(`${url}/v1/default/banks/${BANK}/export`);
    const lines = (await exported.text()).trim().split('\n');
    const exportedIds = lines.map((l) => (JSON.parse(l) as { id: string }).id);
    assert.ok(exportedIds.includes(kept) && !exportedIds.includes(locker), 'an export leaves it out');
    assert.deepEqual(await stored([locker]), [locker], 'the job has not deleted it yet: the reads hide it');
  });

  it('PATCH sets it and null clears it', async () => {
    const set = await call<Memory>(url, 'PATCH', `${path}/${kept}`, { expires_at: iso(nowMs + HOUR) });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal(set.body.expires_at, iso(nowMs + HOUR));
    const cleared = await call<Memory>(url, 'PATCH', `${path}/${kept}`, { expires_at: null });
    assert.equal(cleared.body.expires_at, null);
    nowMs += 2 * HOUR;
    assert.equal((await get(kept)).status, 200);
  });

  it('a time already past forgets the memory at once', async () => {
    const {
      ids: [past],
    } = await retain({ content: 'Maria once lived in Faro.', expires_at: '2020-01-01' });
    assert.equal((await get(past!)).status, 404);
    assert.ok(!ids(await listed()).includes(past!));
  });

  it('malformed and impossible values are 400 problems with a pointer, and change nothing', async () => {
    const before = (await listed()).length;
    const cases: Array<[method: string, where: string, body: unknown, pointer: string]> = [
      ['POST', path, { content: 'Maria likes tea.', expires_at: 'next week' }, '/expires_at'],
      ['POST', path, { items: [{ content: 'Maria likes tea.', expires_at: '2031-02-30' }] }, '/items/0/expires_at'],
      [
        'POST',
        path,
        { messages: [{ role: 'user', content: 'I like tea.', expires_at: 'unset' }] },
        '/messages/0/expires_at',
      ],
      ['POST', path, { content: 'Maria likes tea.', expires_at: '0000-01-01T00:00:00Z' }, '/expires_at'],
      ['POST', path, { content: 'Maria likes tea.', expires_at: 1_900_000_000 }, '/expires_at'],
      ['PATCH', `${path}/${kept}`, { expires_at: 'tomorrow' }, '/expires_at'],
      ['PATCH', `${path}/${kept}`, { expires_at: '2031-13-01' }, '/expires_at'],
    ];
    for (const [method, where, body, pointer] of cases) {
      const r = await call<{ errors?: Array<{ pointer: string }> }>(url, method, where, body);
      assert.equal(r.status, 400, `${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
      assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.equal(r.body.errors?.[0]?.pointer, pointer, JSON.stringify(r.body));
    }
    assert.equal((await listed()).length, before);
    assert.equal((await get(kept)).body.expires_at, null);
  });
});

describe('facts and reflect', () => {
  let source: string;

  it("a fact takes its source's expiry, and a PATCH of the source moves its facts' too", async () => {
    const r = await retain({
      content: 'Maria adopted a parrot called Kiwi. The parrot sleeps in the kitchen.',
      expires_at: iso(nowMs + HOUR),
    });
    source = r.ids[0]!;
    await operationCompleted(url, r.operation!);
    const facts = (await listed()).filter((m) => m.source_id === source);
    assert.ok(facts.length > 0, 'the fake model extracted facts');
    for (const f of facts) assert.equal(f.expires_at, iso(nowMs + HOUR));
    await call(url, 'PATCH', `${path}/${source}`, { expires_at: iso(nowMs + 5 * HOUR) });
    for (const f of (await listed()).filter((m) => m.source_id === source)) {
      assert.equal(f.expires_at, iso(nowMs + 5 * HOUR));
    }
  });

  it('reflect is not given an expired memory', async () => {
    const given = async () => {
      const r = await call(url, 'POST', `/v1/default/banks/${BANK}/reflect`, { query: 'What parrot did Maria adopt?' });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const input = fake.calls.filter((c) => c.purpose === 'reflect').at(-1)!.input!;
      return (input['memories'] as Array<{ id: string }>).map((m) => m.id);
    };
    assert.ok((await given()).includes(source));
    nowMs += 6 * HOUR;
    const after = await given();
    assert.ok(!after.includes(source));
    const current = new Set(ids(await listed()));
    assert.ok(
      after.every((id) => current.has(id)),
      'nothing expired is given (its facts neither)',
    );
  });
});

describe('a bank retention', () => {
  const bank = 'expiry-retention';
  const bankPath = `/v1/default/banks/${bank}`;

  it('sets expires_at on new memories only; an item may still keep its memory or set its own', async () => {
    const {
      ids: [older],
    } = await retain({ content: 'Tom drives a blue van.' }, bank);
    const set = await call<{ retention_days: number | null }>(url, 'PATCH', bankPath, { retention_days: 7 });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal(set.body.retention_days, 7);
    assert.equal((await call<{ retention_days: number }>(url, 'GET', bankPath)).body.retention_days, 7);
    const r = await retain(
      {
        items: [
          { content: 'Tom moved to Leeds.' },
          { content: 'Tom is allergic to nuts.', expires_at: null },
          { content: 'Tom has a dentist visit.', expires_at: iso(nowMs + DAY) },
        ],
      },
      bank,
    );
    const byId = new Map((await listed(bank)).map((m) => [m.id, m.expires_at]));
    assert.equal(byId.get(r.ids[0]!), iso(nowMs + 7 * DAY));
    assert.equal(byId.get(r.ids[1]!), null);
    assert.equal(byId.get(r.ids[2]!), iso(nowMs + DAY));
    assert.equal(byId.get(older!), null, 'memories already stored keep theirs');
    const async = await call<{ operation_id: string }>(url, 'POST', `${bankPath}/memories`, {
      content: 'Tom sings in a choir.',
      async: true,
    });
    await operationCompleted(url, async.body.operation_id);
    const sung = (await listed(bank)).find((m) => m.text.includes('choir'));
    assert.equal(sung?.expires_at, iso(nowMs + 7 * DAY), 'an async retain counts from the call');
  });

  it('null removes it; bad values are 400 problems with a pointer', async () => {
    for (const bad of [0, -3, 1.5, '7', 36_501]) {
      const r = await call<{ errors?: Array<{ pointer: string }> }>(url, 'PATCH', bankPath, { retention_days: bad });
      assert.equal(r.status, 400, `${JSON.stringify(bad)}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.errors?.[0]?.pointer, '/retention_days', JSON.stringify(r.body));
    }
    assert.equal((await call<{ retention_days: number }>(url, 'GET', bankPath)).body.retention_days, 7);
    const removed = await call<{ retention_days: number | null }>(url, 'PATCH', bankPath, { retention_days: null });
    assert.equal(removed.body.retention_days, null);
    const kept = await call<{ retention_days: number | null }>(url, 'PATCH', bankPath, { name: 'Tom' });
    assert.equal(kept.body.retention_days, null);
    const {
      ids: [fresh],
    } = await retain({ content: 'Tom plays chess on Sundays.' }, bank);
    const chess = await call<Memory>(url, 'GET', `${bankPath}/memories/${fresh}`);
    assert.equal(chess.body.expires_at, null);
  });
});

describe('the expiry job', () => {
  it('deletes what expired while the engine was stopped when it starts, facts and all, leaving tombstones', async () => {
    const r = await retain({ content: 'Maria borrowed a ladder from Ben.', expires_at: iso(nowMs + HOUR) });
    await operationCompleted(url, r.operation!);
    const id = r.ids[0]!;
    const facts = (await listed()).filter((m) => m.source_id === id).map((m) => m.id);
    assert.ok(facts.length > 0);
    await engine.close();
    nowMs += 2 * HOUR;
    engine = await start(HOUR, false);
    url = engine.url;
    await engine.engine.expiry.idle();
    assert.deepEqual(await stored([id, ...facts]), []);
    const history = await call<{ items: Array<{ change: string; text: string | null }> }>(
      url,
      'GET',
      `${path}/${id}/history`,
    );
    assert.equal(history.status, 200, JSON.stringify(history.body));
    assert.equal(history.body.items.at(-1)?.change, 'delete');
    assert.ok(
      history.body.items.every((v) => v.text === null),
      'forgotten in every version',
    );
  });

  it('deletes a memory on its schedule once the clock passes its expiry', async () => {
    await engine.close();
    engine = await start(50, false);
    url = engine.url;
    const {
      ids: [id],
    } = await retain({ content: 'Maria has a train at noon.', expires_at: iso(nowMs + HOUR) });
    await engine.engine.expiry.idle();
    assert.deepEqual(await stored([id!]), [id], 'not yet expired');
    nowMs += HOUR;
    // The job runs every 50 ms: wait for its deletion (the clock no longer moves).
    for (let tries = 0; (await stored([id!])).length > 0; tries++) {
      assert.ok(tries < 400, 'deleted by the job');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
});
