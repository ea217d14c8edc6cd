import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mentionsOf } from '../src/memory/mentions.js';
import { call, retainOk, startTestEngine, type TestEngine } from './helpers/engine.js';
import { startFakeLlm, type FakeLlm } from './helpers/fake-llm.js';

/**
 * A bank's entities (GET .../entities and .../entities/{name}): from the cheap extractor without an LLM, from fact
 * extraction with one; paged by cursor, filtered by prefix, a 404 for a name no memory carries, a 400 for bad
 * parameters; sealed names under encryption at rest.
 */

interface Entity {
  name: string;
  kinds: string[];
  memory_count: number;
  first_seen: string;
  last_seen: string;
}
interface EntityPage {
  items: Entity[];
  total: number;
  limit: number;
  next_cursor: string | null;
}
interface EntityEvent {
  at: string;
  change: string;
  memory_id: string;
  version: number | null;
  text: string | null;
  valid_from: string;
  valid_to: string | null;
  superseded_by: string | null;
}
interface EntityDetail extends Entity {
  facts: Array<{ id: string; text: string; type: string; valid_to: string | null }>;
  timeline: EntityEvent[];
}

const path = (bank: string, rest = '') => `/v1/default/banks/${bank}/entities${rest}`;

async function retain(url: string, bank: string, body: Record<string, unknown>): Promise<string[]> {
  return (await retainOk(url, bank, body)).ids;
}

async function entities(url: string, bank: string, query = ''): Promise<EntityPage> {
  const r = await call<EntityPage>(url, 'GET', path(bank, query));
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

async function entity(url: string, bank: string, name: string, query = ''): Promise<EntityDetail> {
  const r = await call<EntityDetail>(url, 'GET', path(bank, `/${encodeURIComponent(name)}${query}`));
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

describe('the cheap extractor', () => {
  it('finds speakers and capitalised names, not sentence openers, pronouns or dates', () => {
    assert.deepEqual(mentionsOf('Alice: I moved to Berlin last Monday with Bob Smith.', {}), [
      { name: 'Alice', kind: 'speaker' },
      { name: 'Berlin', kind: 'name' },
      { name: 'Bob Smith', kind: 'name' },
    ]);
    assert.deepEqual(
      mentionsOf('The weather in New York is nice. Yesterday Carol met Dave at Acme Corp in May.', {}).map(
        (m) => m.name,
      ),
      ['New York', 'Carol', 'Dave', 'Acme Corp'],
    );
    assert.deepEqual(mentionsOf('I think we should go. We will see.', {}), []);
    assert.deepEqual(
      mentionsOf("Wow, that's cool, Caroline! Hey Mel!", {}).map((m) => m.name),
      ['Caroline', 'Mel'],
      'interjections that open a sentence are not names',
    );
    assert.deepEqual(mentionsOf('user: hello there', { speaker: 'user' }), [], 'a role is not a name');
    assert.deepEqual(mentionsOf('Melanie: hi', { speaker: 'Melanie' }), [{ name: 'Melanie', kind: 'speaker' }]);
  });
});

describe('entities without an LLM', () => {
  let engine: TestEngine;
  before(async () => {
    engine = await startTestEngine();
  });
  after(async () => {
    await engine?.dispose();
  });

  it('lists the names memories carry, with kinds, counts and first and last seen', async () => {
    const bank = 'ent-plain';
    await retain(engine.url, bank, {
      messages: [
        { role: 'user', name: 'Alice', content: 'I live in Lisbon with Bob.', timestamp: '2023-03-01T00:00:00Z' },
        { role: 'user', name: 'Bob', content: 'Alice and I love Lisbon.', timestamp: '2023-05-01T00:00:00Z' },
      ],
    });
    await retain(engine.url, bank, {
      items: [
        { content: 'a note without names', entities: [{ text: 'Project Falcon' }], timestamp: '2024-01-01T00:00:00Z' },
      ],
    });
    const page = await entities(engine.url, bank);
    assert.deepEqual(
      page.items.map((e) => [e.name, e.kinds, e.memory_count, e.first_seen, e.last_seen]),
      [
        ['Alice', ['name', 'speaker'], 2, '2023-03-01T00:00:00.000Z', '2023-05-01T00:00:00.000Z'],
        ['Bob', ['name', 'speaker'], 2, '2023-03-01T00:00:00.000Z', '2023-05-01T00:00:00.000Z'],
        ['Lisbon', ['name'], 2, '2023-03-01T00:00:00.000Z', '2023-05-01T00:00:00.000Z'],
        ['Project Falcon', ['given'], 1, '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z'],
      ],
    );
    assert.equal(page.total, 4);
    assert.equal(page.next_cursor, null);
  });

  it('pages with a cursor and filters by a name prefix in any case', async () => {
    const bank = 'ent-pages';
    const names = ['Anna', 'Andrew', 'Bella', 'Carlos', 'Dmitri', 'Elena', 'Farid'];
    await retain(engine.url, bank, { items: names.map((n) => ({ content: `${n} joined the chess club.` })) });
    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page: EntityPage = await entities(
        engine.url,
        bank,
        `?limit=3${cursor === '' ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
      );
      assert.ok(page.items.length <= 3);
      assert.equal(page.total, names.length);
      seen.push(...page.items.map((e) => e.name));
      cursor = page.next_cursor;
    }
    assert.deepEqual(
      seen,
      [...names].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())),
    );
    const an = await entities(engine.url, bank, '?prefix=aN');
    assert.deepEqual(
      an.items.map((e) => e.name),
      ['Andrew', 'Anna'],
    );
    assert.equal(an.total, 2);
    const none = await entities(engine.url, bank, `?prefix=${encodeURIComponent('%')}`);
    assert.deepEqual(none.items, [], 'a LIKE wildcard in the prefix is matched as itself');
  });

  it("answers an entity's current facts and a timeline from history and validity", async () => {
    const bank = 'ent-detail';
    const [lisbon] = await retain(engine.url, bank, {
      content: 'Alice lives in Lisbon.',
      timestamp: '2023-03-01T00:00:00Z',
    });
    const [berlin] = await retain(engine.url, bank, {
      content: 'Alice moved to Berlin.',
      timestamp: '2024-06-01T00:00:00Z',
      supersedes: [lisbon],
    });
    await retain(engine.url, bank, { content: 'Bob stayed in Porto.' });
    const alice = await entity(engine.url, bank, 'alice');
    assert.equal(alice.name, 'Alice');
    assert.equal(alice.memory_count, 2);
    assert.deepEqual(
      alice.facts.map((f) => f.id),
      [berlin],
      'only the current memory is a fact',
    );
    assert.deepEqual(
      alice.timeline.map((e) => [e.at, e.change, e.memory_id]),
      [
        ['2023-03-01T00:00:00.000Z', 'create', lisbon],
        ['2024-06-01T00:00:00.000Z', 'create', berlin],
        ['2024-06-01T00:00:00.000Z', 'supersede', lisbon],
      ],
    );
    assert.equal(alice.timeline[2]!.superseded_by, berlin);
    assert.equal(alice.timeline[0]!.text, 'Alice lives in Lisbon.');

    // Without history, the timeline is read from validity.
    const quiet = 'ent-no-history';
    assert.equal((await call(engine.url, 'PUT', `/v1/default/banks/${quiet}`, { history: 'off' })).status, 200);
    const [old] = await retain(engine.url, quiet, {
      content: 'Carol works at Initech.',
      timestamp: '2022-01-01T00:00:00Z',
    });
    const [now] = await retain(engine.url, quiet, {
      content: 'Carol works at Initrode.',
      timestamp: '2023-01-01T00:00:00Z',
      supersedes: [old],
    });
    const carol = await entity(engine.url, quiet, 'Carol');
    assert.deepEqual(
      carol.timeline.map((e) => [e.at, e.change, e.memory_id, e.version]),
      [
        ['2022-01-01T00:00:00.000Z', 'create', old, null],
        ['2023-01-01T00:00:00.000Z', 'create', now, null],
        ['2023-01-01T00:00:00.000Z', 'supersede', old, null],
      ],
    );
  });

  it('follows edits and deletes: a changed text renames, a deleted memory forgets its names', async () => {
    const bank = 'ent-edits';
    const [id] = await retain(engine.url, bank, { content: 'Dave visited Rome.' });
    const edit = await call(engine.url, 'PATCH', `/v1/default/banks/${bank}/memories/${id}`, {
      text: 'Dave visited Madrid.',
    });
    assert.equal(edit.status, 200);
    assert.deepEqual(
      (await entities(engine.url, bank)).items.map((e) => e.name),
      ['Dave', 'Madrid'],
    );
    assert.equal((await call(engine.url, 'DELETE', `/v1/default/banks/${bank}/memories/${id}`)).status, 200);
    assert.deepEqual((await entities(engine.url, bank)).items, []);
    assert.equal((await call(engine.url, 'GET', path(bank, '/Dave'))).status, 404);
  });

  it('a name no memory carries is a 404; bad parameters are a 400 problem', async () => {
    const bank = 'ent-plain';
    const missing = await call<{ code: string; detail: string }>(engine.url, 'GET', path(bank, '/Zorro'));
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'entity_not_found');
    assert.equal(missing.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    for (const query of ['?limit=0', '?limit=abc', '?limit=5000', '?cursor=forged.cursor', '?space=bad%20space']) {
      const r = await call<{ code: string }>(engine.url, 'GET', path(bank, query));
      assert.equal(r.status, 400, query);
      assert.equal(r.body.code, 'validation_failed', query);
    }
    const otherList = await entities(engine.url, 'ent-pages', '?limit=1');
    const wrongScope = await call(
      engine.url,
      'GET',
      path(bank, `?limit=1&cursor=${encodeURIComponent(otherList.next_cursor!)}`),
    );
    assert.equal(wrongScope.status, 400, "another bank's cursor");
    const longName = await call(engine.url, 'GET', path(bank, `/${'x'.repeat(201)}`));
    assert.equal(longName.status, 400);
    const detailLimit = await call(engine.url, 'GET', path(bank, '/Alice?limit=0'));
    assert.equal(detailLimit.status, 400);
  });
});

describe('entities with an LLM and under encryption at rest', () => {
  let fake: FakeLlm;
  let engine: TestEngine;
  before(async () => {
    fake = await startFakeLlm();
    engine = await startTestEngine({
      ...fake.openaiEnv,
      MNEMOS_API_ENCRYPTION_MASTER_KEY: Buffer.alloc(32, 5).toString('base64'),
    });
  });
  after(async () => {
    await engine?.dispose();
    await fake?.stop();
  });

  async function settle(operationId: string): Promise<void> {
    for (let i = 0; i < 600; i++) {
      const r = await call<{ status: string }>(engine.url, 'GET', `/v1/default/operations/${operationId}`);
      if (r.body.status === 'completed') return;
      assert.notEqual(r.body.status, 'failed');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.fail('extraction did not complete');
  }

  it("answers the facts' extracted entities, with names sealed in the database", async () => {
    const bank = 'ent-llm';
    const r = await call<{ operation_id: string }>(engine.url, 'POST', `/v1/default/banks/${bank}/memories`, {
      content: 'Grace works at Globex in Zurich.',
    });
    assert.equal(r.status, 200);
    await settle(r.body.operation_id);
    const page = await entities(engine.url, bank);
    const byName = new Map(page.items.map((e) => [e.name, e]));
    assert.deepEqual(byName.get('Globex')?.kinds, ['extracted', 'name']);
    assert.equal(byName.get('Globex')?.memory_count, 2, 'the retained memory and its fact');
    const grace = await entity(engine.url, bank, 'GRACE');
    assert.equal(grace.name, 'Grace');
    assert.deepEqual(grace.facts.map((f) => f.type).sort(), ['raw', 'world']);

    const stored = await engine.engine.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM memory_entities
       WHERE bank_id = $1 AND (name IS NOT NULL OR key ILIKE '%grace%' OR name_enc IS NULL)`,
      [bank],
    );
    assert.equal(stored[0]!.n, 0, 'no name in plaintext: keys are blind tokens, names ciphertext');

    const prefix = await call<{ errors: Array<{ pointer: string }> }>(engine.url, 'GET', path(bank, '?prefix=gr'));
    assert.equal(prefix.status, 400);
    assert.equal(prefix.body.errors[0]!.pointer, '/query/prefix');
  });
});
