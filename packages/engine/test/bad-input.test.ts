import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';

/**
 * Every malformed request gets a clear 4xx application/problem+json answer (never a 500) and changes nothing in the
 * database.
 */

let engine: TestEngine;

before(async () => {
  engine = await startTestEngine({ MNEMOS_API_MAX_BODY_BYTES: '131072' });
  await call(engine.url, 'POST', '/v1/default/banks/known/memories', {
    content: 'A baseline memory so the bank exists.',
  });
});
after(async () => {
  await engine?.dispose();
});

async function snapshot(): Promise<string> {
  const rows = await engine.engine.db.query<{ n: number; b: number; h: string | null }>(
    `SELECT (SELECT count(*)::int FROM memories) AS n, (SELECT count(*)::int FROM banks) AS b,
            (SELECT md5(string_agg(id::text || coalesce(text, '') || state || array_to_string(tags, ','), '|' ORDER BY id)) FROM memories) AS h`,
  );
  return JSON.stringify(rows[0]);
}

interface Case {
  name: string;
  method: string;
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  status: number;
  code: string;
  pointer?: string;
  /** The whole errors list, where the case checks that a field gets one error naming what it accepts. */
  errors?: Array<{ pointer: string; detail: string }>;
}

const longQuery = Array.from({ length: 10_000 }, (_, i) => `word${i % 97}`).join(' ');

const cases: Case[] = [
  {
    name: 'malformed JSON',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: '{"content": "unterminated',
    status: 400,
    code: 'malformed_json',
  },
  {
    name: 'JSON that is not an object',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: '"just a string"',
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'empty body',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: '',
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'neither content nor items',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { space: 'x' },
    status: 400,
    code: 'validation_failed',
    pointer: '/content',
  },
  {
    name: 'content and items together',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { content: 'a', items: [{ content: 'b' }] },
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'content of the wrong type',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { items: [{ content: 42 }] },
    status: 400,
    code: 'validation_failed',
    pointer: '/items/0/content',
  },
  {
    name: 'empty content',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { content: '' },
    status: 400,
    code: 'validation_failed',
    pointer: '/content',
  },
  {
    name: 'whitespace-only content',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { items: [{ content: 'fine' }, { content: ' \n\t ' }] },
    status: 400,
    code: 'validation_failed',
    pointer: '/items/1/content',
  },
  {
    name: 'NUL character in content',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { content: 'bad\u0000byte' },
    status: 400,
    code: 'validation_failed',
    pointer: '/content',
  },
  {
    name: 'empty items list',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { items: [] },
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'items not a list',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { items: { content: 'x' } },
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'metadata nested past its 8 levels',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { items: [{ content: 'x', metadata: { n: [[[[[[[[1]]]]]]]] } }] },
    status: 400,
    code: 'validation_failed',
    pointer: '/items/0/metadata/n/0/0/0/0/0/0/0',
  },
  {
    name: 'bad timestamp',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { items: [{ content: 'x', timestamp: 'yesterday-ish' }] },
    status: 400,
    code: 'validation_failed',
    pointer: '/items/0/timestamp',
  },
  {
    name: 'impossible date',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { items: [{ content: 'x', timestamp: '2024-02-31T99:00:00Z' }] },
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'a day its month does not have (JavaScript would read 2023-03-01)',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { items: [{ content: 'x', timestamp: '2023-02-29' }] },
    status: 400,
    code: 'validation_failed',
    pointer: '/items/0/timestamp',
  },
  {
    name: 'tags not strings',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { content: 'x', tags: [1, 2] },
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'tags as broken JSON string',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { content: 'x', tags: '[oops' },
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'invalid space',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { content: 'x', space: 'no spaces allowed' },
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'invalid bank id characters',
    method: 'POST',
    path: '/v1/default/banks/bad%20bank/memories',
    body: { content: 'x' },
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'bank id too long',
    method: 'POST',
    path: `/v1/default/banks/${'b'.repeat(257)}/memories`,
    body: { content: 'x' },
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'bank id with a slash',
    method: 'POST',
    path: '/v1/default/banks/a%2Fb/memories',
    body: { content: 'x' },
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'oversized body',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { content: 'x'.repeat(140_000) },
    status: 413,
    code: 'payload_too_large',
  },
  {
    name: 'wrong content type',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: 'content=x',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    status: 415,
    code: 'unsupported_media_type',
  },
  {
    name: 'recall without query',
    method: 'POST',
    path: '/v1/default/banks/known/memories/recall',
    body: {},
    status: 400,
    code: 'validation_failed',
    pointer: '/query',
  },
  {
    name: 'recall with punctuation-only query',
    method: 'POST',
    path: '/v1/default/banks/known/memories/recall',
    body: { query: '?!...' },
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'recall with bad budget',
    method: 'POST',
    path: '/v1/default/banks/known/memories/recall',
    body: { query: 'x', budget: 'enormous' },
    status: 400,
    code: 'validation_failed',
    errors: [{ pointer: '/budget', detail: 'must be one of "low", "mid", "high", an integer from 1 to 5000 or null' }],
  },
  {
    name: 'recall with negative max_tokens',
    method: 'POST',
    path: '/v1/default/banks/known/memories/recall',
    body: { query: 'x', max_tokens: -5 },
    status: 400,
    code: 'validation_failed',
    errors: [{ pointer: '/max_tokens', detail: 'must be an integer from 1 to 1000000 or null' }],
  },
  {
    name: 'recall with unknown type',
    method: 'POST',
    path: '/v1/default/banks/known/memories/recall',
    body: { query: 'x', types: ['bogus'] },
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'recall with bad query_timestamp',
    method: 'POST',
    path: '/v1/default/banks/known/memories/recall',
    body: { query: 'x', query_timestamp: 'soon' },
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'recall with bad tags_match',
    method: 'POST',
    path: '/v1/default/banks/known/memories/recall',
    body: { query: 'x', tags: ['a'], tags_match: 'some' },
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'memory id that is not a UUID',
    method: 'GET',
    path: '/v1/default/banks/known/memories/not-a-uuid',
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'delete of an unknown memory',
    method: 'DELETE',
    path: '/v1/default/banks/known/memories/00000000-0000-4000-8000-000000000000',
    status: 404,
    code: 'memory_not_found',
  },
  {
    name: 'patch with nothing to change',
    method: 'PATCH',
    path: '/v1/default/banks/known/memories/00000000-0000-4000-8000-000000000000',
    body: {},
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'patch with bad state',
    method: 'PATCH',
    path: '/v1/default/banks/known/memories/00000000-0000-4000-8000-000000000000',
    body: { state: 'gone' },
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'list with a negative limit',
    method: 'GET',
    path: '/v1/default/banks/known/memories?limit=-1',
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'list with a non-numeric offset',
    method: 'GET',
    path: '/v1/default/banks/known/memories?offset=abc',
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'list with a bad since date',
    method: 'GET',
    path: '/v1/default/banks/known/memories?since=last-tuesday',
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'bank PUT with disposition out of range',
    method: 'PUT',
    path: '/v1/default/banks/known',
    body: { disposition: { skepticism: 9 } },
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'bank PUT with a number name',
    method: 'PUT',
    path: '/v1/default/banks/known',
    body: { name: 7 },
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'description-level retain without bank_id',
    method: 'POST',
    path: '/v1/retain',
    body: { content: 'x' },
    status: 400,
    code: 'validation_failed',
    pointer: '/bank_id',
  },
  {
    name: 'description-level recall with invalid bank_id',
    method: 'POST',
    path: '/v1/recall',
    body: { bank_id: 'bad bank', query: 'x' },
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'reflect without query',
    method: 'POST',
    path: '/v1/default/banks/known/reflect',
    body: {},
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'reflect with a non-object response_schema',
    method: 'POST',
    path: '/v1/default/banks/known/reflect',
    body: { query: 'x', response_schema: 'json please' },
    status: 400,
    code: 'validation_failed',
  },
  {
    name: 'retain with an empty message list',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { messages: [] },
    status: 400,
    code: 'validation_failed',
    pointer: '/messages',
  },
  {
    name: 'retain a message with an unknown role',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { messages: [{ role: 'narrator', content: 'Once upon a time.' }] },
    status: 400,
    code: 'validation_failed',
    pointer: '/messages/0/role',
  },
  {
    name: 'retain a message with empty content',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { messages: [{ role: 'user', content: '' }] },
    status: 400,
    code: 'validation_failed',
    pointer: '/messages/0/content',
  },
  {
    name: 'retain a message with blank content',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: {
      messages: [
        { role: 'user', content: 'Hi.' },
        { role: 'user', content: '  ' },
      ],
    },
    status: 400,
    code: 'validation_failed',
    pointer: '/messages/1/content',
  },
  {
    name: 'retain a message with a bad timestamp',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { messages: [{ role: 'user', content: 'Hi.', timestamp: 'yesterday' }] },
    status: 400,
    code: 'validation_failed',
    pointer: '/messages/0/timestamp',
  },
  {
    name: 'retain a message whose name has a colon',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { messages: [{ role: 'user', name: 'Dr: Who', content: 'Hi.' }] },
    status: 400,
    code: 'validation_failed',
    pointer: '/messages/0/name',
  },
  {
    name: 'retain too many messages',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { messages: Array.from({ length: 1001 }, (_, i) => ({ role: 'user', content: `turn ${i}` })) },
    status: 400,
    code: 'validation_failed',
    pointer: '/messages',
  },
  {
    name: 'retain items and messages over the bound together',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: {
      items: Array.from({ length: 600 }, (_, i) => ({ content: `item ${i}` })),
      messages: Array.from({ length: 401 }, (_, i) => ({ role: 'user', content: `turn ${i}` })),
    },
    status: 400,
    code: 'validation_failed',
    pointer: '/messages',
  },
  {
    name: 'retain content together with messages',
    method: 'POST',
    path: '/v1/default/banks/known/memories',
    body: { content: 'One.', messages: [{ role: 'user', content: 'Two.' }] },
    status: 400,
    code: 'validation_failed',
    pointer: '/content',
  },
  {
    name: 'recall with min_relevance above 1',
    method: 'POST',
    path: '/v1/default/banks/known/memories/recall',
    body: { query: 'x', min_relevance: 1.5 },
    status: 400,
    code: 'validation_failed',
    pointer: '/min_relevance',
  },
  {
    name: 'list memories with a cursor that is not one',
    method: 'GET',
    path: '/v1/default/banks/known/memories?cursor=bm90LWEtY3Vyc29y',
    status: 400,
    code: 'validation_failed',
    pointer: '/query/cursor',
  },
  {
    name: 'list memories with a cursor of the bank list',
    method: 'GET',
    path: '/v1/default/banks/known/memories?cursor=eyJsaXN0IjoiYmFua3MiLCJhdCI6IjIwMjQtMDEtMDEgMDA6MDA6MDArMDAiLCJiYW5rSWQiOiJrbm93biJ9',
    status: 400,
    code: 'validation_failed',
    pointer: '/query/cursor',
  },
  {
    name: 'list memories with a cursor and an offset',
    method: 'GET',
    path: '/v1/default/banks/known/memories?offset=2&cursor=eyJsaXN0IjoiYmFua3MiLCJhdCI6IjIwMjQtMDEtMDEgMDA6MDA6MDArMDAiLCJiYW5rSWQiOiJrbm93biJ9',
    status: 400,
    code: 'validation_failed',
    pointer: '/query/offset',
  },
  {
    name: 'list banks with a bad cursor',
    method: 'GET',
    path: '/v1/default/banks?cursor=%7B%7D',
    status: 400,
    code: 'validation_failed',
    pointer: '/query/cursor',
  },
  {
    // Well-formed but naming no real instant: Postgres would refuse the date, so the engine refuses the cursor first.
    name: 'list memories with a forged cursor dated 31 February',
    method: 'GET',
    path: '/v1/default/banks/known/memories?cursor=eyJsaXN0IjoibWVtb3JpZXMiLCJhdCI6IjIwMjQtMDItMzEgMTA6MDA6MDArMDAiLCJjcmVhdGVkQXQiOiIyMDI0LTAyLTAxIDEwOjAwOjAwKzAwIiwic2VxIjowLCJpZCI6IjAwMDAwMDAwLTAwMDAtNDAwMC04MDAwLTAwMDAwMDAwMDAwMCJ9',
    status: 400,
    code: 'validation_failed',
    pointer: '/query/cursor',
  },
  {
    name: 'list banks with a forged cursor holding a NUL',
    method: 'GET',
    path: '/v1/default/banks?cursor=eyJsaXN0IjoiYmFua3MiLCJhdCI6IjIwMjQtMDItMDEgMTA6MDA6MDArMDAiLCJiYW5rSWQiOiJhXHUwMDAwYiJ9',
    status: 400,
    code: 'validation_failed',
    pointer: '/query/cursor',
  },
  { name: 'invalid tenant', method: 'GET', path: '/v1/Not_Valid!/banks', status: 404, code: 'tenant_not_found' },
  { name: 'unknown route', method: 'GET', path: '/v1/default/nothing-here', status: 404, code: 'not_found' },
  {
    name: 'unknown method on a route',
    method: 'PUT',
    path: '/v1/default/banks/known/memories/recall',
    body: { query: 'x' },
    status: 405,
    code: 'method_not_allowed',
  },
];

describe('bad input', () => {
  for (const c of cases) {
    it(`${c.name}: ${c.status} ${c.code}, nothing changes`, async () => {
      const before = await snapshot();
      const r = await call<{
        type: string;
        title: string;
        status: number;
        detail: string;
        code: string;
        errors?: Array<{ pointer: string; detail: string }>;
      }>(engine.url, c.method, c.path, c.body, c.headers);
      assert.equal(r.status, c.status, JSON.stringify(r.body));
      assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.equal(r.body.code, c.code);
      assert.equal(r.body.status, c.status);
      assert.equal(typeof r.body.title, 'string');
      assert.ok(r.body.detail.length > 20, 'detail says what went wrong');
      if (c.pointer)
        assert.ok(
          r.body.errors?.some((e) => e.pointer === c.pointer),
          JSON.stringify(r.body.errors),
        );
      if (c.errors) assert.deepEqual(r.body.errors, c.errors);
      assert.equal(await snapshot(), before);
    });
  }

  it('a 10,000-word query is answered without error', async () => {
    const r = await call<{ results: unknown[] }>(engine.url, 'POST', '/v1/default/banks/known/memories/recall', {
      query: longQuery,
    });
    assert.equal(r.status, 200);
    assert.ok(Array.isArray(r.body.results));
  });

  it('unknown fields are ignored', async () => {
    const r = await call<{ memory_ids: string[] }>(engine.url, 'POST', '/v1/default/banks/unknowns/memories', {
      items: [
        {
          content: 'Fields nobody knows are fine.',
          observation_scopes: 'per_tag',
          strategy: null,
          frobnicate: { deep: [1, 2] },
        },
      ],
      document_tags: ['x'],
      operation_id: null,
      whatever: true,
    });
    assert.equal(r.status, 200);
    const q = await call<{ results: Array<{ id: string }> }>(
      engine.url,
      'POST',
      '/v1/default/banks/unknowns/memories/recall',
      { query: 'fields', prefer_observations: true, min_scores: { final: 0 } },
    );
    assert.equal(q.status, 200);
    assert.equal(q.body.results[0]?.id, r.body.memory_ids[0]);
  });

  it('unicode edge cases are stored and recalled intact', async () => {
    const texts = [
      'Emoji 🧠🐙 and flags 🇵🇹 in a memory',
      'Combining marks: e\u0301 vs é, and zero\u200bwidth joiners',
      '日本語の記憶：東京で寿司を食べた',
      'Right-to-left: שלום עולם and مرحبا',
    ];
    const r = await call<{ memory_ids: string[] }>(engine.url, 'POST', '/v1/default/banks/unicode/memories', {
      items: texts.map((content) => ({ content })),
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.memory_ids.length, texts.length);
    const list = await call<{ items: Array<{ text: string }> }>(
      engine.url,
      'GET',
      '/v1/default/banks/unicode/memories',
    );
    const stored = new Set(list.body.items.map((m) => m.text));
    for (const t of texts) assert.ok(stored.has(t), `stored ${t}`);
    const q = await call<{ results: Array<{ text: string }> }>(
      engine.url,
      'POST',
      '/v1/default/banks/unicode/memories/recall',
      { query: '🧠 emoji' },
    );
    assert.equal(q.status, 200);
  });

  it('a batch with one bad item stores none of the items', async () => {
    const before = await snapshot();
    const r = await call(engine.url, 'POST', '/v1/default/banks/known/memories', {
      items: [{ content: 'good one' }, { content: 'good two' }, { content: 'bad', timestamp: 'never' }],
    });
    assert.equal(r.status, 400);
    assert.equal(await snapshot(), before);
  });
});
