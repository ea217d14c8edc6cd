import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { recall } from '../src/recall/pipeline.js';
import { recallOnTier } from './helpers/tier-recall.js';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';
import { FACTS, request } from './helpers/recall-facts.js';

/**
 * Validity over time: `supersedes` closes the replaced memories' validity at the new one's valid_from; recall (on
 * every tier) and the list answer current memories by default, what was valid at `as_of`, or everything with
 * `include_superseded`; PATCH sets valid_from and valid_to; malformed values are 400s that change nothing.
 */

let engine: TestEngine;
let url: string;
const BANK = 'validity';
const path = `/v1/default/banks/${BANK}/memories`;

interface Hit {
  id: string;
  text: string;
  valid_from: string;
  valid_to: string | null;
  superseded_by: string | null;
}

let lisbon: string;
let berlin: string;
let unrelated: string;

async function retain(body: Record<string, unknown>, bank = BANK): Promise<string[]> {
  const r = await call<{ memory_ids: string[] }>(url, 'POST', `/v1/default/banks/${bank}/memories`, body);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.memory_ids;
}

async function recallIds(body: Record<string, unknown>): Promise<Hit[]> {
  const r = await call<{ results: Hit[] }>(url, 'POST', `${path}/recall`, { query: 'Where does Alice live?', ...body });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.results;
}

async function listed(query = ''): Promise<Hit[]> {
  const r = await call<{ items: Hit[] }>(url, 'GET', `${path}${query}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.items;
}

const idsOf = (hits: readonly Hit[]) => hits.map((h) => h.id);

before(async () => {
  engine = await startTestEngine();
  url = engine.url;
  await retain({ items: FACTS.map((content) => ({ content })) });
  lisbon = (await retain({ content: 'Alice lives in Lisbon near the river.', timestamp: '2023-01-10T00:00:00Z' }))[0]!;
  unrelated = (await retain({ content: 'Alice enjoys living by the sea.', timestamp: '2023-02-01T00:00:00Z' }))[0]!;
  berlin = (
    await retain({
      messages: [{ role: 'user', name: 'Alice', content: 'I moved to Berlin last week.', supersedes: [lisbon] }],
      timestamp: '2024-06-01T00:00:00Z',
    })
  )[0]!;
});
after(async () => {
  await engine?.dispose();
});

describe('validity over time', () => {
  it("supersedes closes the old memory at the new one's valid_from and names its successor", async () => {
    const old = await call<Hit>(url, 'GET', `${path}/${lisbon}`);
    assert.equal(old.body.valid_to, '2024-06-01T00:00:00.000Z');
    assert.equal(old.body.superseded_by, berlin);
    assert.equal(old.body.valid_from, '2023-01-10T00:00:00.000Z');
    const current = await call<Hit>(url, 'GET', `${path}/${berlin}`);
    assert.equal(current.body.valid_from, '2024-06-01T00:00:00.000Z');
    assert.equal(current.body.valid_to, null);
  });

  it('recall answers current memories by default, what was valid at as_of, and everything with include_superseded', async () => {
    const now = idsOf(await recallIds({}));
    assert.ok(now.includes(berlin) && now.includes(unrelated));
    assert.ok(!now.includes(lisbon), 'the superseded memory is left out');
    const asOf = await call<{ results: Array<Hit & { scores: Record<string, number> }> }>(
      url,
      'POST',
      `${path}/recall`,
      {
        query: 'Where does Alice live?',
        as_of: '2023-06-01T00:00:00Z',
      },
    );
    const then = idsOf(asOf.body.results);
    assert.ok(then.includes(lisbon) && then.includes(unrelated));
    assert.equal(then[0], lisbon, 'what was current then ranks as current: no demotion for a later successor');
    assert.equal(asOf.body.results[0]!.scores['superseded'], undefined);
    assert.ok(!then.includes(berlin), 'not yet valid then');
    const all = await recallIds({ include_superseded: true });
    const old = all.find((h) => h.id === lisbon);
    assert.ok(old && all.some((h) => h.id === berlin));
    assert.equal(old.valid_to, '2024-06-01T00:00:00.000Z');
    assert.equal(old.superseded_by, berlin);
  });

  for (const tier of ['memory', 'compact', 'postgres'] as const) {
    it(`the ${tier} tier honours validity, also for a supersession after its copy loaded`, async () => {
      const deps = recallOnTier(engine.engine, tier);
      const ask = async (extra: Parameters<typeof request>[2] = {}) => {
        const r = await recall(deps, request(BANK, 'Where does Alice live?', { ...extra, trace: true }));
        assert.equal(r.trace?.tier, tier);
        return r.results.map((h) => h.memory.id);
      };
      const now = await ask();
      assert.ok(now.includes(berlin) && !now.includes(lisbon));
      const then = await ask({ asOf: new Date('2023-06-01T00:00:00Z') });
      assert.ok(then.includes(lisbon) && !then.includes(berlin));
      const all = await ask({ includeSuperseded: true });
      assert.ok(all.includes(lisbon) && all.includes(berlin));
      // A supersession made while the copy is held is seen by the next recall.
      const [moved] = await retain({
        content: `Alice now lives by the sea in Porto (${tier}).`,
        supersedes: [unrelated],
        timestamp: '2025-01-01T00:00:00Z',
      });
      const after = await ask();
      assert.ok(after.includes(moved!) && !after.includes(unrelated));
      assert.ok((await ask({ asOf: new Date('2024-12-01T00:00:00Z') })).includes(unrelated));
      // Reopened for the next tier.
      const reopened = await call(url, 'PATCH', `${path}/${unrelated}`, { valid_to: null });
      assert.equal(reopened.status, 200);
      assert.ok((await ask()).includes(unrelated));
    });
  }

  it('the list answers current memories by default, as_of and include_superseded', async () => {
    const now = idsOf(await listed());
    assert.ok(now.includes(berlin) && !now.includes(lisbon));
    const then = idsOf(await listed('?as_of=2023-06-01T00:00:00Z'));
    assert.ok(then.includes(lisbon) && !then.includes(berlin));
    const all = await listed('?include_superseded=true');
    assert.equal(all.find((h) => h.id === lisbon)?.superseded_by, berlin);
  });

  it('PATCH sets valid_from and valid_to; valid_to null makes a memory current again', async () => {
    const [id] = await retain({ content: 'Alice is on the premium plan.' });
    const set = await call<Hit>(url, 'PATCH', `${path}/${id}`, {
      valid_from: '2022-01-01T00:00:00Z',
      valid_to: '2022-12-31T00:00:00Z',
    });
    assert.equal(set.status, 200);
    assert.equal(set.body.valid_from, '2022-01-01T00:00:00.000Z');
    assert.equal(set.body.valid_to, '2022-12-31T00:00:00.000Z');
    assert.ok(!idsOf(await listed()).includes(id!));
    assert.ok(idsOf(await listed('?as_of=2022-06-01T00:00:00Z')).includes(id!));
    const back = await call<Hit>(url, 'PATCH', `${path}/${id}`, { valid_to: null, valid_from: null });
    assert.equal(back.body.valid_to, null);
    assert.notEqual(back.body.valid_from, '2022-01-01T00:00:00.000Z', 'back to its date');
    assert.ok(idsOf(await listed()).includes(id!));
  });

  it('malformed values are 400 problems with a pointer, and change nothing', async () => {
    const before = (await listed('?include_superseded=true')).length;
    const other = (await retain({ content: 'Zed keeps bees.' }, 'elsewhere'))[0]!;
    const cases: Array<[method: string, where: string, body: unknown, pointer: string]> = [
      ['POST', `${path}/recall`, { query: 'Alice', as_of: 'yesterday' }, '/as_of'],
      ['POST', `${path}/recall`, { query: 'Alice', include_superseded: 'yes' }, '/include_superseded'],
      ['GET', `${path}?as_of=not-a-date`, undefined, '/query/as_of'],
      ['POST', path, { content: 'Alice lives in Rome.', supersedes: lisbon }, '/supersedes'],
      ['POST', path, { items: [{ content: 'Alice lives in Rome.', supersedes: ['nope'] }] }, '/items/0/supersedes/0'],
      ['POST', path, { content: 'Alice lives in Rome.', supersedes: [crypto.randomUUID()] }, '/supersedes'],
      ['POST', path, { items: [{ content: 'Alice lives in Rome.', supersedes: [other] }] }, '/items/0/supersedes'],
      [
        'POST',
        path,
        { messages: [{ role: 'user', content: 'I live in Rome.', supersedes: [crypto.randomUUID()] }] },
        '/messages/0/supersedes',
      ],
      ['POST', path, { items: [{ content: 'Alice lives in Rome.' }], supersedes: [berlin] }, '/supersedes'],
      ['PATCH', `${path}/${berlin}`, { valid_to: 'soon' }, '/valid_to'],
      [
        'PATCH',
        `${path}/${berlin}`,
        { valid_from: '2024-02-01T00:00:00Z', valid_to: '2024-01-01T00:00:00Z' },
        '/valid_to',
      ],
    ];
    for (const [method, where, body, pointer] of cases) {
      const r = await call<{ errors?: Array<{ pointer: string; detail: string }>; detail: string }>(
        url,
        method,
        where,
        body,
      );
      assert.equal(r.status, 400, `${method} ${where} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
      assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.equal(r.body.errors?.[0]?.pointer, pointer, JSON.stringify(r.body));
    }
    const unknown = crypto.randomUUID();
    const named = await call<{ detail: string }>(url, 'POST', path, {
      content: 'Alice lives in Oslo.',
      supersedes: [unknown],
    });
    assert.ok(named.body.detail.includes(unknown), 'the unknown id is named');
    assert.equal((await listed('?include_superseded=true')).length, before, 'nothing was stored');
    const berlinNow = await call<Hit>(url, 'GET', `${path}/${berlin}`);
    assert.equal(berlinNow.body.valid_to, null, 'nothing was closed');
  });
});
