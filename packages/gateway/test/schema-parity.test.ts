// The gateway accepts every request the engine accepts and refuses every one the engine refuses, with the same status,
// code, JSON pointer and detail: the same bodies (and list queries) are sent to a real engine directly and through the
// gateway in front of it, on every engine route the gateway fronts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import {
  ENGINE_TOKEN,
  call,
  obj,
  setupProject,
  startHarness,
  startTestEngine,
  type EngineHandle,
  type Harness,
  type Res,
} from './helpers.js';

/** A body as JSON, or raw text sent as application/json as it is. */
type Fixture = { name: string; body: unknown } | { name: string; raw: string };

/** One route of the engine and its mirror on the gateway; `bank` and `id` are filled in per server. */
interface FrontedRoute {
  method: 'POST' | 'PUT' | 'PATCH' | 'GET';
  engine: string;
  gateway: string;
  /** The description-level routes name their bank in the body. */
  bankInBody?: boolean;
}

const RAW: Fixture[] = [
  { name: 'empty body', raw: '' },
  { name: 'not JSON', raw: '{"query": ' },
  { name: 'JSON null', raw: 'null' },
  { name: 'a list', raw: '[]' },
  { name: 'a string', raw: '"text"' },
];

const RETAIN: Fixture[] = [
  { name: 'content', body: { content: 'Ada drinks green tea.' } },
  {
    name: 'content with every optional field null (Hindsight clients send nulls)',
    body: {
      content: 'Ada lives in Lisbon.',
      space: null,
      timestamp: null,
      context: null,
      metadata: null,
      tags: null,
      document_id: null,
      async: null,
    },
  },
  { name: 'items', body: { items: [{ content: 'Ada rides a bike.', tags: ['sport'], timestamp: '2024-01-15' }] } },
  { name: 'items with null fields', body: { items: [{ content: 'Ada reads.', context: null, entities: null }] } },
  { name: 'messages', body: { messages: [{ role: 'user', content: 'I like tea.', name: null }] } },
  { name: 'tags as one string', body: { content: 'Ada paints.', tags: 'art' } },
  { name: 'unknown fields', body: { content: 'Ada sings.', hindsight_only: { x: 1 } } },
  { name: 'nothing to retain', body: {} },
  { name: 'empty content', body: { content: '' } },
  { name: 'content a number', body: { content: 42 } },
  { name: 'content null', body: { content: null } },
  { name: 'blank content', body: { content: '   ' } },
  { name: 'content and items together', body: { content: 'x', items: [{ content: 'y' }] } },
  { name: 'no items', body: { items: [] } },
  { name: 'item without content', body: { items: [{ tags: ['a'] }] } },
  { name: 'item content a number', body: { items: [{ content: 5 }] } },
  { name: 'unknown role', body: { messages: [{ role: 'robot', content: 'hi' }] } },
  { name: 'space with a blank', body: { content: 'x', space: 'two words' } },
  { name: 'space a number', body: { content: 'x', space: 7 } },
  {
    name: 'metadata of any JSON',
    body: { content: 'x', metadata: { k: 5, on: true, none: null, list: [1, 'a'], nested: { a: { b: 2.5 } } } },
  },
  { name: 'metadata too deep', body: { content: 'x', metadata: { a: [[[[[[[['deep']]]]]]]] } } },
  {
    name: 'metadata over 64 KiB',
    body: {
      content: 'x',
      metadata: { a: 'x'.repeat(9_999), b: ['y'.repeat(9_999)].concat(Array(6).fill('z'.repeat(9_999))) },
    },
  },
  { name: 'metadata value beyond a double', raw: '{"content": "x", "metadata": {"n": 1e400}}' },
  { name: 'tags a number', body: { content: 'x', tags: 5 } },
  { name: 'timestamp not a date', body: { content: 'x', timestamp: 'last tuesday-ish' } },
  { name: 'async a string', body: { content: 'x', async: 'yes' } },
  { name: 'document id empty', body: { content: 'x', document_id: '' } },
  { name: 'NUL in content', body: { content: 'a\u0000b' } },
  { name: 'NUL in a metadata key', body: { content: 'x', metadata: { 'k\u0000': 'v' } } },
  {
    name: 'expires_at on the body, an item and a message',
    body: {
      items: [{ content: 'Ada has a gym pass.', expires_at: '2031-05-01T00:00:00Z' }],
      messages: [{ role: 'user', content: 'My visa ends in June.', expires_at: null }],
      expires_at: '2031-06-01',
    },
  },
  { name: 'expires_at not a date', body: { content: 'x', expires_at: 'next week' } },
  { name: 'expires_at impossible', body: { items: [{ content: 'x', expires_at: '2031-02-30' }] } },
  { name: 'expires_at a number', body: { messages: [{ role: 'user', content: 'x', expires_at: 5 }] } },
];

const RECALL: Fixture[] = [
  { name: 'query', body: { query: 'What does Ada drink?' } },
  {
    name: 'query with every optional field null (Hindsight clients send nulls)',
    body: {
      query: 'Where does Ada live?',
      space: null,
      max_tokens: null,
      budget: null,
      include_org: null,
      types: null,
      tags: null,
      tags_match: null,
      query_timestamp: null,
      trace: null,
      include: null,
      min_relevance: null,
    },
  },
  {
    name: 'every optional field set',
    body: {
      query: 'tea',
      space: 'default',
      max_tokens: 500,
      budget: 'high',
      include_org: false,
      types: ['world'],
      tags: ['sport'],
      tags_match: 'any_strict',
      query_timestamp: '2024-02-01T10:00:00Z',
      trace: true,
      include: {},
      min_relevance: 0.2,
    },
  },
  { name: 'budget a number', body: { query: 'tea', budget: 300 } },
  { name: 'no query', body: {} },
  { name: 'empty query', body: { query: '' } },
  { name: 'query a number', body: { query: 5 } },
  { name: 'space with a blank', body: { query: 'tea', space: 'two words' } },
  { name: 'max_tokens zero', body: { query: 'tea', max_tokens: 0 } },
  { name: 'max_tokens a fraction', body: { query: 'tea', max_tokens: 1.5 } },
  { name: 'unknown budget', body: { query: 'tea', budget: 'huge' } },
  { name: 'budget too large', body: { query: 'tea', budget: 5001 } },
  { name: 'types a string', body: { query: 'tea', types: 'world' } },
  { name: 'too many types', body: { query: 'tea', types: Array.from({ length: 17 }, () => 'world') } },
  { name: 'unknown tags_match', body: { query: 'tea', tags_match: 'some' } },
  { name: 'min_relevance above 1', body: { query: 'tea', min_relevance: 2 } },
  { name: 'include a number', body: { query: 'tea', include: 5 } },
  { name: 'trace a string', body: { query: 'tea', trace: 'yes' } },
  { name: 'query_timestamp not a date', body: { query: 'tea', query_timestamp: 'soonish' } },
  { name: 'tags a JSON-looking string that is not JSON', body: { query: 'tea', tags: '[oops' } },
  { name: 'lone surrogate in the query', body: { query: 'tea \ud800' } },
];

const REFLECT: Fixture[] = [
  { name: 'query', body: { query: 'What does Ada like?' } },
  {
    name: 'query with every optional field null',
    body: {
      query: 'What does Ada like?',
      space: null,
      budget: null,
      context: null,
      include: null,
      response_schema: null,
      max_tokens: null,
      fact_types: null,
      types: null,
      tags: null,
      tags_match: null,
      query_timestamp: null,
    },
  },
  { name: 'no query', body: {} },
  { name: 'blank query', body: { query: '  ' } },
  { name: 'response_schema a string', body: { query: 'q', response_schema: 'json' } },
  { name: 'no fact types', body: { query: 'q', fact_types: [] } },
  { name: 'budget zero', body: { query: 'q', budget: 0 } },
  { name: 'context a number', body: { query: 'q', context: 3 } },
];

const BANK: Fixture[] = [
  { name: 'name and mission', body: { name: 'Parity', mission: 'Remember things.' } },
  {
    name: 'every field null',
    body: { name: null, mission: null, background: null, reflect_mission: null, disposition: null, space: null },
  },
  { name: 'disposition', body: { disposition: { skepticism: 2, literalism: 3, empathy: 4 } } },
  { name: 'skepticism out of range', body: { disposition: { skepticism: 9 } } },
  { name: 'name a number', body: { name: 5 } },
  { name: 'mission too long', body: { mission: 'x'.repeat(10_001) } },
  { name: 'space with a blank', body: { space: 'two words' } },
  { name: 'retention_days', body: { retention_days: 30 } },
  { name: 'retention_days null', body: { retention_days: null } },
  { name: 'retention_days zero', body: { retention_days: 0 } },
  { name: 'retention_days a string', body: { retention_days: '7' } },
];

const MEMORY_PATCH: Fixture[] = [
  { name: 'tags', body: { tags: ['edited'] } },
  { name: 'context null and metadata null', body: { context: null, metadata: null } },
  { name: 'occurred_at unset', body: { occurred_at: 'unset' } },
  { name: 'empty text', body: { text: '' } },
  { name: 'unknown state', body: { state: 'gone' } },
  { name: 'occurred_at not a date', body: { occurred_at: 'someday' } },
  { name: 'metadata a list', body: { metadata: ['a'] } },
  { name: 'metadata nested', body: { metadata: { n: 2, o: { p: [true] } } } },
  { name: 'metadata a nested key too long', body: { metadata: { o: { ['k'.repeat(257)]: 1 } } } },
  { name: 'tags a number', body: { tags: 3 } },
  { name: 'expires_at', body: { expires_at: '2031-01-01T00:00:00Z' } },
  { name: 'expires_at null', body: { expires_at: null } },
  { name: 'expires_at not a date', body: { expires_at: 'tomorrow' } },
];

/** Fixtures for the description-level routes: the bank in the body. */
const BANK_ID: Fixture[] = [
  { name: 'bank_id', body: { bank_id: 'parity-top', query: 'tea', content: 'Ada grows tomatoes.' } },
  { name: 'no bank_id', body: { query: 'tea', content: 'x' } },
  { name: 'bank_id null', body: { bank_id: null, query: 'tea', content: 'x' } },
  { name: 'bank_id with a blank', body: { bank_id: 'two words', query: 'tea', content: 'x' } },
];

/** List queries: the same limits on both servers. */
const BULK_DELETE: Fixture[] = [
  { name: 'a filter, dry run', body: { filter: { type: 'world' }, dry_run: true } },
  {
    name: 'an or filter, dry run',
    body: { filter: { or: [{ tags: 'a' }, { timestamp: { gte: '2024-01-01' } }] }, dry_run: true },
  },
  { name: 'no filter', body: { dry_run: true } },
  { name: 'a bad operator', body: { filter: { type: { near: 'x' } }, dry_run: true } },
  { name: 'dry_run a string', body: { filter: { type: 'world' }, dry_run: 'yes' } },
];

const SOME_ID = '0b8f8a36-1b7e-4a43-9d40-4d3b3f6fd111';
const BULK_UPDATE: Fixture[] = [
  { name: 'ids and tags', body: { ids: [SOME_ID], set: { tags: ['a'] } } },
  { name: 'a filter and a state', body: { filter: { type: 'world' }, set: { state: 'invalidated' } } },
  { name: 'no selection', body: { set: { tags: ['a'] } } },
  { name: 'both selections', body: { ids: [SOME_ID], filter: { type: 'world' }, set: { tags: ['a'] } } },
  { name: 'an empty set', body: { ids: [SOME_ID], set: {} } },
  { name: 'no set', body: { ids: [SOME_ID] } },
  { name: 'an id that is no UUID', body: { ids: ['x'], set: { tags: ['a'] } } },
  { name: 'a bad state', body: { ids: [SOME_ID], set: { state: 'gone' } } },
];

const BULK_GET: Fixture[] = [
  { name: 'one id', body: { ids: [SOME_ID] } },
  { name: 'no ids', body: { ids: [] } },
  { name: 'an id that is no UUID', body: { ids: [SOME_ID, 'x'] } },
  { name: 'ids a string', body: { ids: SOME_ID } },
];

const LIST_QUERIES = [
  `filter=${encodeURIComponent('{"metadata.project":"apollo"}')}`,
  `filter=${encodeURIComponent('{"timestamp":{"after":"2024"}}')}`,
  'filter=%7Bnot-json',
  'limit=0',
  'limit=1000',
  'limit=1001',
  'limit=-1',
  'offset=1e20',
  'offset=5',
  'limit=abc',
  'state=valid',
  'state=gone',
  'cursor=',
  'space=two%20words',
  'since=2024-01-01T00:00:00Z',
];

const withBank = (fixture: Fixture, bank: string): Fixture =>
  'body' in fixture && fixture.body !== null && typeof fixture.body === 'object' && !Array.isArray(fixture.body)
    ? { name: fixture.name, body: { bank_id: bank, ...(fixture.body as Record<string, unknown>) } }
    : fixture;

/** What a caller learns from an answer: accepted, or refused with a status, a code, a pointer and a detail. */
function outcome(res: Res): string {
  if (res.status < 400 || res.status >= 500)
    return res.status >= 500 ? `passed the checks (${res.status})` : 'accepted';
  const body = obj(res.body);
  const errors = (body['errors'] ?? []) as Array<{ pointer?: string }>;
  return `${res.status} ${String(body['code'])} ${errors[0]?.pointer ?? '(no pointer)'}: ${String(body['detail'])}`;
}

describe('the gateway validates forwarded requests as the engine does', () => {
  let engine: EngineHandle;
  let h: Harness;
  let key = '';
  let tenant = '';
  /** A memory of each server's own bank, for the memory PATCH route. */
  const memoryIds = { engine: '', gateway: '' };

  before(async () => {
    engine = await startTestEngine();
    h = await startHarness(engine.url);
    const unlimited = { memories: 10_000_000, recalls: 10_000_000, reflects: 10_000_000 };
    const project = await setupProject(h.url, { quotas: unlimited });
    key = project.key;
    const db = new pg.Client({ connectionString: h.db.url });
    await db.connect();
    const { rows } = await db.query<{ tenant: string }>('SELECT tenant FROM projects WHERE id = $1', [
      project.projectId,
    ]);
    await db.end();
    tenant = rows[0]!.tenant;
    for (const side of ['engine', 'gateway'] as const) {
      const path = side === 'engine' ? '/banks/{bank}/memories' : '/v1/me/banks/{bank}/memories';
      const r = await send(side, 'POST', path, { content: 'Ada keeps bees.' });
      assert.equal(r.status, 200, r.text);
      memoryIds[side] = (obj(r.body)['memory_ids'] as string[])[0]!;
    }
  });
  after(async () => {
    await h?.close();
    await engine?.close();
  });

  /** Each server writes to its own bank, so one side's accepted writes never change what the other side answers. */
  const bankOf = (side: 'engine' | 'gateway'): string => `parity-${side}`;

  function send(side: 'engine' | 'gateway', method: string, path: string, body?: unknown, raw?: string): Promise<Res> {
    const filled = path.replace('{bank}', bankOf(side)).replace('{id}', memoryIds[side]);
    const url = side === 'engine' ? (filled.startsWith('/v1/') ? filled : `/v1/${tenant}${filled}`) : filled;
    const token = side === 'engine' ? ENGINE_TOKEN : key;
    return call(side === 'engine' ? engine.url : h.url, method, url, {
      token,
      ...(raw !== undefined ? { raw } : body !== undefined ? { body } : {}),
    });
  }

  /** The fixtures' answers on both servers: where they differ, and how many the engine accepted and refused. */
  async function compare(route: FrontedRoute, fixtures: Fixture[]) {
    const differences: string[] = [];
    let accepted = 0;
    for (const fixture of fixtures) {
      const answers: Record<'engine' | 'gateway', string> = { engine: '', gateway: '' };
      for (const side of ['engine', 'gateway'] as const) {
        const sent = route.bankInBody === true ? withBank(fixture, bankOf(side)) : fixture;
        const path = side === 'engine' ? route.engine : route.gateway;
        const res =
          'raw' in sent
            ? await send(side, route.method, path, undefined, sent.raw)
            : await send(side, route.method, path, sent.body);
        answers[side] = outcome(res);
      }
      if (!answers.engine.startsWith('4')) accepted++;
      if (answers.engine !== answers.gateway) {
        differences.push(
          `${route.method} ${route.gateway} "${fixture.name}": engine ${answers.engine}; gateway ${answers.gateway}`,
        );
      }
    }
    return { differences, accepted, refused: fixtures.length - accepted };
  }

  const cases: Array<{ what: string; routes: FrontedRoute[]; fixtures: Fixture[] }> = [
    {
      what: 'retain bodies',
      fixtures: [...RETAIN, ...RAW],
      routes: [
        { method: 'POST', engine: '/banks/{bank}/memories', gateway: '/v1/me/banks/{bank}/memories' },
        { method: 'POST', engine: '/spaces/parity/memories', gateway: '/v1/me/spaces/parity/memories' },
        { method: 'POST', engine: '/v1/retain', gateway: '/v1/retain', bankInBody: true },
      ],
    },
    {
      what: 'recall bodies',
      fixtures: [...RECALL, ...RAW],
      routes: [
        { method: 'POST', engine: '/banks/{bank}/memories/recall', gateway: '/v1/me/banks/{bank}/memories/recall' },
        { method: 'POST', engine: '/spaces/parity/memories/recall', gateway: '/v1/me/spaces/parity/memories/recall' },
        { method: 'POST', engine: '/v1/recall', gateway: '/v1/recall', bankInBody: true },
      ],
    },
    {
      what: 'reflect bodies',
      fixtures: [...REFLECT, ...RAW],
      routes: [
        { method: 'POST', engine: '/banks/{bank}/reflect', gateway: '/v1/me/banks/{bank}/reflect' },
        { method: 'POST', engine: '/v1/reflect', gateway: '/v1/reflect', bankInBody: true },
      ],
    },
    {
      what: 'the bank named in the body of the description-level routes',
      fixtures: BANK_ID,
      routes: ['retain', 'recall', 'reflect'].map((op) => ({
        method: 'POST',
        engine: `/v1/${op}`,
        gateway: `/v1/${op}`,
      })),
    },
    {
      what: 'bank profile bodies',
      fixtures: [...BANK, ...RAW],
      routes: [
        { method: 'PUT', engine: '/banks/{bank}', gateway: '/v1/me/banks/{bank}' },
        { method: 'PATCH', engine: '/banks/{bank}', gateway: '/v1/me/banks/{bank}' },
      ],
    },
    {
      what: 'memory edits',
      fixtures: [...MEMORY_PATCH, ...RAW],
      routes: [
        { method: 'PATCH', engine: '/banks/{bank}/memories/{id}', gateway: '/v1/me/banks/{bank}/memories/{id}' },
      ],
    },
    {
      what: 'bulk deletes',
      fixtures: [...BULK_DELETE, ...RAW],
      routes: [
        { method: 'POST', engine: '/banks/{bank}/memories/delete', gateway: '/v1/me/banks/{bank}/memories/delete' },
      ],
    },
    {
      what: 'bulk updates',
      fixtures: [...BULK_UPDATE, ...RAW],
      routes: [
        { method: 'POST', engine: '/banks/{bank}/memories/update', gateway: '/v1/me/banks/{bank}/memories/update' },
      ],
    },
    {
      what: 'bulk gets',
      fixtures: [...BULK_GET, ...RAW],
      routes: [{ method: 'POST', engine: '/banks/{bank}/memories/get', gateway: '/v1/me/banks/{bank}/memories/get' }],
    },
  ];

  for (const { what, routes, fixtures } of cases) {
    it(`answers the same to ${fixtures.length} ${what} on ${routes.length} route(s)`, async () => {
      const differences: string[] = [];
      for (const route of routes) {
        const result = await compare(route, fixtures);
        differences.push(...result.differences);
        // Each route sees bodies the engine accepts and bodies it refuses, so the comparison covers both answers.
        assert.ok(result.accepted > 0 && result.refused > 0, `${route.gateway}: ${JSON.stringify(result)}`);
      }
      assert.deepEqual(differences, []);
    });
  }

  it("passes expires_at and a bank's retention_days through, both ways", async () => {
    const bank = '/v1/me/banks/parity-expiry';
    const created = await send('gateway', 'PUT', bank, { retention_days: 30 });
    assert.equal(created.status, 200, created.text);
    assert.equal(obj(created.body)['retention_days'], 30);
    const r = await send('gateway', 'POST', `${bank}/memories`, {
      content: 'Ada renews her passport.',
      expires_at: '2031-05-01T00:00:00Z',
    });
    assert.equal(r.status, 200, r.text);
    const id = (obj(r.body)['memory_ids'] as string[])[0]!;
    const got = await send('gateway', 'GET', `${bank}/memories/${id}`);
    assert.equal(obj(got.body)['expires_at'], '2031-05-01T00:00:00.000Z');
    const cleared = await send('gateway', 'PATCH', `${bank}/memories/${id}`, { expires_at: null });
    assert.equal(cleared.status, 200, cleared.text);
    assert.equal(obj(cleared.body)['expires_at'], null);
  });

  it('answers the same to list queries (memories and banks)', async () => {
    const differences: string[] = [];
    const lists = [
      { engine: '/banks/{bank}/memories', gateway: '/v1/me/banks/{bank}/memories' },
      { engine: '/banks/{bank}/memories/list', gateway: '/v1/me/banks/{bank}/memories/list' },
      { engine: '/banks', gateway: '/v1/me/banks' },
    ];
    for (const list of lists) {
      for (const query of LIST_QUERIES) {
        const [e, g] = await Promise.all([
          send('engine', 'GET', `${list.engine}?${query}`),
          send('gateway', 'GET', `${list.gateway}?${query}`),
        ]);
        if (outcome(e) !== outcome(g)) {
          differences.push(`GET ${list.gateway}?${query}: engine ${outcome(e)}; gateway ${outcome(g)}`);
        }
      }
    }
    assert.deepEqual(differences, []);
  });

  it('accepts a recall whose space, budget and types are null through the gateway, as the engine does', async () => {
    const body = { query: 'What does Ada keep?', space: null, budget: null, types: null };
    const through = await send('gateway', 'POST', '/v1/me/banks/{bank}/memories/recall', body);
    assert.equal(through.status, 200, through.text);
    assert.match(JSON.stringify(obj(through.body)['results']), /bees/);
    const refused = await send('gateway', 'POST', '/v1/me/banks/{bank}/memories/recall', { query: 'tea', space: 7 });
    assert.equal(refused.status, 400);
    assert.equal(((obj(refused.body)['errors'] ?? []) as Array<{ pointer: string }>)[0]?.pointer, '/space');
  });
});
