// The filter expression on the faces: REST list (query string), recall and reflect (bodies), the MCP recall and
// list_memories tools; a bad expression answers 400 with the bad node's pointer; encrypted metadata is refused.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { METADATA_LIMITS } from '../src/wire/metadata.js';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';

type Problem = { status: number; errors?: Array<{ pointer: string; detail: string }> };

const BANK = '/v1/default/banks/filtered';
let engine: TestEngine;
let sealed: TestEngine;
let apollo: string[] = [];
let other: string[] = [];

async function retain(on: TestEngine): Promise<{ apollo: string[]; other: string[] }> {
  const items = [
    { content: 'Quentin photographed a rare ghost orchid.', metadata: { project: 'apollo' }, tags: ['photo'] },
    { content: 'The orchid greenhouse needs a new heater.', metadata: { project: 'zeus' } },
    {
      content: 'Hail ruined the orchid seedlings.',
      metadata: { project: 'apollo' },
      timestamp: '2023-06-01T00:00:00Z',
    },
  ];
  const answer = await call<{ memory_ids: string[] }>(on.url, 'POST', `${BANK}/memories`, { items });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const ids = answer.body.memory_ids;
  return { apollo: [ids[0]!, ids[2]!], other: [ids[1]!] };
}

const listPath = (filter: unknown) =>
  `${BANK}/memories?filter=${encodeURIComponent(typeof filter === 'string' ? filter : JSON.stringify(filter))}`;

before(async () => {
  engine = await startTestEngine();
  sealed = await startTestEngine({ MNEMOS_API_ENCRYPTION_MASTER_KEY: Buffer.alloc(32, 9).toString('base64') });
  ({ apollo, other } = await retain(engine));
  await retain(sealed);
});
after(async () => {
  await engine?.dispose();
  await sealed?.dispose();
});

describe('REST', () => {
  it('lists the memories a filter passes (filter is JSON text in the query string)', async () => {
    const page = await call<{ items: Array<{ id: string }>; total: number }>(
      engine.url,
      'GET',
      listPath({ 'metadata.project': 'apollo' }),
    );
    assert.equal(page.status, 200);
    assert.deepEqual(new Set(page.body.items.map((m) => m.id)), new Set(apollo));
    assert.equal(page.body.total, 2);
    const dated = await call<{ items: Array<{ id: string }> }>(
      engine.url,
      'GET',
      listPath({ and: [{ 'metadata.project': 'apollo' }, { timestamp: { lt: '2024-01-01' } }] }),
    );
    assert.deepEqual(
      dated.body.items.map((m) => m.id),
      [apollo[1]],
    );
  });

  it('recalls only what the filter passes', async () => {
    const answer = await call<{ results: Array<{ id: string }> }>(engine.url, 'POST', `${BANK}/memories/recall`, {
      query: 'orchid',
      filter: { not: { 'metadata.project': 'apollo' } },
    });
    assert.equal(answer.status, 200);
    assert.deepEqual(
      answer.body.results.map((r) => r.id),
      other,
    );
  });

  it('answers a bad filter with 400 and the pointer of the bad node, on list, recall and reflect', async () => {
    const bad = { and: [{ 'metadata.project': 'apollo' }, { timestamp: { gte: 'yesterday' } }] };
    const list = await call<Problem>(engine.url, 'GET', listPath(bad));
    assert.equal(list.status, 400);
    assert.equal(list.body.errors?.[0]?.pointer, '/query/filter/and/1/timestamp/gte');
    const notJson = await call<Problem>(engine.url, 'GET', listPath('{"metadata.project":'));
    assert.equal(notJson.status, 400);
    assert.equal(notJson.body.errors?.[0]?.pointer, '/query/filter');
    for (const path of ['/memories/recall', '/reflect']) {
      const answer = await call<Problem>(engine.url, 'POST', `${BANK}${path}`, { query: 'orchid', filter: bad });
      assert.equal(answer.status, 400, path);
      assert.match(answer.headers.get('content-type') ?? '', /application\/problem\+json/);
      assert.equal(answer.body.errors?.[0]?.pointer, '/filter/and/1/timestamp/gte', path);
    }
  });

  it('refuses a metadata filter when bodies are encrypted, and filters on the plaintext columns', async () => {
    const list = await call<Problem>(sealed.url, 'GET', listPath({ 'metadata.project': 'apollo' }));
    assert.equal(list.status, 400);
    assert.equal(list.body.errors?.[0]?.pointer, '/query/filter');
    const recall = await call<Problem>(sealed.url, 'POST', `${BANK}/memories/recall`, {
      query: 'orchid',
      filter: { or: [{ tags: 'photo' }, { 'metadata.project': { exists: true } }] },
    });
    assert.equal(recall.status, 400);
    assert.equal(recall.body.errors?.[0]?.pointer, '/filter');
    const tagged = await call<{ results: Array<{ text: string }> }>(sealed.url, 'POST', `${BANK}/memories/recall`, {
      query: 'orchid',
      filter: { tags: 'photo' },
    });
    assert.equal(tagged.status, 200);
    assert.deepEqual(
      tagged.body.results.map((r) => r.text),
      ['Quentin photographed a rare ghost orchid.'],
    );
  });
});

describe('metadata as any JSON', () => {
  const typed = {
    priority: 3,
    score: -0.25,
    reviewed: true,
    owner: { name: 'ann', level: 2, teams: ['core'] },
    labels: ['macro', 7],
    note: null,
  };
  type Stored = { id: string; metadata: Record<string, unknown> };

  it('is stored and answered as sent, on retain items, messages, PATCH, history, list and recall, sealed or not', async () => {
    for (const on of [engine, sealed]) {
      const bank = '/v1/default/banks/typed-meta';
      const retained = await call<{ memory_ids: string[] }>(on.url, 'POST', `${bank}/memories`, {
        metadata: { session: 's1' },
        items: [{ content: 'Vera repotted the ghost orchid.', metadata: typed }],
        messages: [{ role: 'user', content: 'I water the ferns on Sundays.' }],
      });
      assert.equal(retained.status, 200, JSON.stringify(retained.body));
      const [item, message] = retained.body.memory_ids;
      const got = await call<Stored>(on.url, 'GET', `${bank}/memories/${item}`);
      assert.deepEqual(got.body.metadata, typed);
      const said = await call<Stored>(on.url, 'GET', `${bank}/memories/${message}`);
      assert.deepEqual(said.body.metadata, { session: 's1', role: 'user', speaker: 'user' });
      const recalled = await call<{ results: Stored[] }>(on.url, 'POST', `${bank}/memories/recall`, {
        query: 'orchid',
      });
      assert.deepEqual(recalled.body.results.find((r) => r.id === item)?.metadata, typed);
      const patched = { ...typed, priority: 4.5, owner: { name: 'ann', level: 3 } };
      const patch = await call<Stored>(on.url, 'PATCH', `${bank}/memories/${item}`, { metadata: patched });
      assert.equal(patch.status, 200, JSON.stringify(patch.body));
      assert.deepEqual(patch.body.metadata, patched);
      const listed = await call<{ items: Stored[] }>(on.url, 'GET', `${bank}/memories`);
      assert.deepEqual(listed.body.items.find((m) => m.id === item)?.metadata, patched);
      const history = await call<{ items: Array<{ metadata: unknown }> }>(
        on.url,
        'GET',
        `${bank}/memories/${item}/history`,
      );
      assert.deepEqual(
        history.body.items.map((v) => v.metadata),
        [typed, patched],
      );
      const [row] = await on.engine.db.query<{ metadata: unknown }>('SELECT metadata FROM memories WHERE id = $1', [
        item!,
      ]);
      assert.deepEqual(row?.metadata, on === sealed ? {} : patched, 'a sealed bank keeps metadata only in the body');
      // An async retain queues its items (sealed, with encryption) and stores them later: the metadata survives.
      const queued = await call<{ operation_id: string }>(on.url, 'POST', `${bank}/memories`, {
        content: 'Vera watered the ghost orchid.',
        metadata: typed,
        async: true,
      });
      let op = { status: 'pending', memory_ids: [] as string[] };
      for (let tries = 0; tries < 600 && op.status !== 'completed' && op.status !== 'failed'; tries++) {
        await new Promise((r) => setTimeout(r, 100));
        op = (await call<typeof op>(on.url, 'GET', `/v1/default/operations/${queued.body.operation_id}`)).body;
      }
      assert.equal(op.status, 'completed');
      const later = await call<Stored>(on.url, 'GET', `${bank}/memories/${op.memory_ids[0]}`);
      assert.deepEqual(later.body.metadata, typed);
    }
  });

  it('filters numbers as numbers, booleans, lists and nested keys on list, recall and bulk delete', async () => {
    const bank = '/v1/default/banks/typed-filter';
    const items = [
      {
        content: 'Ann pruned the orchid.',
        metadata: { priority: 3, done: true, tags: ['a', 1], who: { name: 'ann' } },
      },
      { content: 'Bo fed the orchid.', metadata: { priority: 10, done: false, tags: ['b'], who: { name: 'bo' } } },
      { content: 'Cy misted the orchid.', metadata: { priority: '3', who: 'cy' } },
    ];
    const ids = (await call<{ memory_ids: string[] }>(engine.url, 'POST', `${bank}/memories`, { items })).body
      .memory_ids;
    const cases: Array<[unknown, number[]]> = [
      [{ 'metadata.priority': { gte: 3 } }, [0, 1]],
      [{ 'metadata.priority': { gt: 3, lte: 10 } }, [1]],
      [{ 'metadata.priority': { lt: 4 } }, [0]],
      [{ 'metadata.priority': 3 }, [0]],
      [{ 'metadata.priority': '3' }, [2]],
      [{ 'metadata.priority': { in: [10, '3'] } }, [1, 2]],
      [{ 'metadata.priority': { nin: [3] } }, [1, 2]],
      [{ 'metadata.done': false }, [1]],
      [{ 'metadata.done': { ne: true } }, [1, 2]],
      [{ 'metadata.tags': { contains: 1 } }, [0]],
      [{ 'metadata.tags': { contains: 'b' } }, [1]],
      [{ 'metadata.who.name': 'bo' }, [1]],
      [{ 'metadata.who.name': { exists: false } }, [2]],
      [{ 'metadata.who': { eq: { name: 'ann' } } }, [0]],
    ];
    for (const [filter, expected] of cases) {
      const want = new Set(expected.map((i) => ids[i]));
      const listed = await call<{ items: Stored[] }>(
        engine.url,
        'GET',
        `${bank}/memories?filter=${encodeURIComponent(JSON.stringify(filter))}`,
      );
      assert.deepEqual(new Set(listed.body.items.map((m) => m.id)), want, `list ${JSON.stringify(filter)}`);
      const recalled = await call<{ results: Stored[] }>(engine.url, 'POST', `${bank}/memories/recall`, {
        query: 'orchid',
        filter,
      });
      assert.deepEqual(new Set(recalled.body.results.map((m) => m.id)), want, `recall ${JSON.stringify(filter)}`);
    }
    const dry = await call<{ deleted_count: number }>(engine.url, 'POST', `${bank}/memories/delete`, {
      filter: { 'metadata.priority': { gte: 5 } },
      dry_run: true,
    });
    assert.equal(dry.body.deleted_count, 1);
  });

  it('refuses metadata over its bounds with 400 and the pointer of what is over, and stores nothing', async () => {
    const bank = '/v1/default/banks/typed-bounds';
    let deep: unknown = 'bottom';
    for (let i = 0; i <= METADATA_LIMITS.depth; i++) deep = { d: deep };
    const cases: Array<[body: unknown, pointer: string]> = [
      [{ content: 'x', metadata: deep }, '/metadata/d/d/d/d/d/d/d/d'],
      [{ items: [{ content: 'x', metadata: { a: [[[[[[[['too deep']]]]]]]] } }] }, '/items/0/metadata/a/0/0/0/0/0/0/0'],
      [{ content: 'x', metadata: { big: Array.from({ length: 10 }, () => 'x'.repeat(9_000)) } }, '/metadata'],
      [{ content: 'x', metadata: { k: { ['k'.repeat(257)]: 1 } } }, `/metadata/k/${'k'.repeat(257)}`],
      [{ content: 'x', metadata: { k: ['x'.repeat(10_001)] } }, '/metadata/k/0'],
      [{ content: 'x', metadata: { k: 'x'.repeat(10_001) } }, '/metadata/k'],
    ];
    for (const [body, pointer] of cases) {
      const answer = await call<Problem>(engine.url, 'POST', `${bank}/memories`, body);
      assert.equal(answer.status, 400, pointer);
      assert.equal(answer.body.errors?.[0]?.pointer, pointer);
    }
    const infinite = await call<Problem>(
      engine.url,
      'POST',
      `${bank}/memories`,
      '{"content": "x", "metadata": {"n": 1e400}}',
    );
    assert.equal(infinite.status, 400);
    assert.equal(infinite.body.errors?.[0]?.pointer, '/metadata/n');
    const patch = await call<Problem>(engine.url, 'PATCH', `${BANK}/memories/${apollo[0]}`, { metadata: deep });
    assert.equal(patch.status, 400);
    assert.equal(patch.body.errors?.[0]?.pointer, '/metadata/d/d/d/d/d/d/d/d');
    const page = await call<{ total: number }>(engine.url, 'GET', `${bank}/memories`);
    assert.equal(page.body.total, 0);
    const kept = await call<Stored>(engine.url, 'GET', `${BANK}/memories/${apollo[0]}`);
    assert.deepEqual(kept.body.metadata, { project: 'apollo' });
    // At the bounds: eight levels and a string of 10,000 characters are stored.
    let eight: unknown = 1;
    for (let i = 0; i < METADATA_LIMITS.depth; i++) eight = { d: eight };
    const fits = await call(engine.url, 'POST', `${bank}/memories`, {
      content: 'x',
      metadata: { ...(eight as object), s: 'x'.repeat(10_000) },
    });
    assert.equal(fits.status, 200, JSON.stringify(fits.body));
  });
});

describe('bulk delete (POST .../memories/delete)', () => {
  const bulk = '/v1/default/banks/bulk';
  it('counts on a dry run, then deletes what the filter passes, and recall no longer answers it', async () => {
    const items = ['Ann likes green tea.', 'Ann likes black coffee.', 'Ann likes oolong tea.'].map((content, i) => ({
      content,
      metadata: { session: i < 2 ? 's1' : 's2' },
    }));
    const retained = await call<{ memory_ids: string[] }>(engine.url, 'POST', `${bulk}/memories`, { items });
    const [, , kept] = retained.body.memory_ids;
    const recallIds = async () =>
      (
        await call<{ results: Array<{ id: string }> }>(engine.url, 'POST', `${bulk}/memories/recall`, {
          query: 'What does Ann like?',
        })
      ).body.results.map((r) => r.id);
    assert.equal((await recallIds()).length, 3, 'the bank is recalled (and held in memory) before the delete');
    const filter = { 'metadata.session': 's1' };
    const dry = await call<{ deleted_count: number }>(engine.url, 'POST', `${bulk}/memories/delete`, {
      filter,
      dry_run: true,
    });
    assert.equal(dry.status, 200);
    assert.equal(dry.body.deleted_count, 2);
    const elsewhere = await call<{ deleted_count: number }>(engine.url, 'POST', `${bulk}/memories/delete`, {
      filter,
      space: 'elsewhere',
    });
    assert.equal(elsewhere.body.deleted_count, 0, 'a space given bounds the delete to it');
    assert.equal((await recallIds()).length, 3, 'a dry run deletes nothing');
    const done = await call<{ deleted_count: number }>(engine.url, 'POST', `${bulk}/memories/delete`, { filter });
    assert.equal(done.body.deleted_count, 2);
    assert.deepEqual(await recallIds(), [kept]);
  });

  it('refuses a missing or bad filter with 400 and deletes nothing', async () => {
    const missing = await call<Problem>(engine.url, 'POST', `${BANK}/memories/delete`, {});
    assert.equal(missing.status, 400);
    assert.equal(missing.body.errors?.[0]?.pointer, '/filter');
    const bad = await call<Problem>(engine.url, 'POST', `${BANK}/memories/delete`, { filter: { tags: { gt: 1 } } });
    assert.equal(bad.status, 400);
    assert.match(bad.body.errors?.[0]?.pointer ?? '', /^\/filter\/tags/);
    const page = await call<{ total: number }>(engine.url, 'GET', `${BANK}/memories`);
    assert.equal(page.body.total, 3);
  });
});

describe('MCP', () => {
  let client: Client;
  before(async () => {
    client = new Client({ name: 'mnemos-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', engine.url)));
  });
  after(async () => {
    await client?.close();
  });
  const textOf = (result: Awaited<ReturnType<Client['callTool']>>): string => {
    const first = (result as CallToolResult).content[0];
    assert.ok(first && first.type === 'text');
    return first.text;
  };

  it('recall and list_memories take a filter', async () => {
    const filter = { 'metadata.project': 'apollo' };
    const recalled = await client.callTool({
      name: 'recall',
      arguments: { bank_id: 'filtered', query: 'orchid', filter },
    });
    assert.notEqual(recalled.isError, true, textOf(recalled));
    const results = (JSON.parse(textOf(recalled)) as { results: Array<{ id: string }> }).results;
    assert.deepEqual(new Set(results.map((r) => r.id)), new Set(apollo));
    const listed = await client.callTool({ name: 'list_memories', arguments: { bank_id: 'filtered', filter } });
    const items = (JSON.parse(textOf(listed)) as { items: Array<{ id: string }> }).items;
    assert.deepEqual(new Set(items.map((m) => m.id)), new Set(apollo));
  });

  it('retain takes metadata of any JSON, and a filter compares its numbers', async () => {
    const retained = await client.callTool({
      name: 'retain',
      arguments: {
        bank_id: 'mcp-typed',
        content: 'Ivy repotted the cactus.',
        metadata: { priority: 10, who: { n: 1 } },
      },
    });
    assert.notEqual(retained.isError, true, textOf(retained));
    const tooDeep = await client.callTool({
      name: 'retain',
      arguments: { bank_id: 'mcp-typed', content: 'Ivy sold the cactus.', metadata: { a: [[[[[[[[1]]]]]]]] } },
    });
    assert.equal(tooDeep.isError, true);
    assert.match(textOf(tooDeep), /\/metadata\/a\/0\/0\/0\/0\/0\/0\/0 nests metadata deeper than 8 levels/);
    const listed = await client.callTool({
      name: 'list_memories',
      arguments: { bank_id: 'mcp-typed', filter: { 'metadata.priority': { gt: 9 } } },
    });
    const items = (JSON.parse(textOf(listed)) as { items: Array<{ metadata: unknown }> }).items;
    assert.deepEqual(
      items.map((m) => m.metadata),
      [{ priority: 10, who: { n: 1 } }],
    );
  });

  it('answers a bad filter with an error naming the bad node', async () => {
    const filter = { or: [{ 'metadata.project': { near: 'apollo' } }] };
    for (const name of ['recall', 'list_memories']) {
      const args = { bank_id: 'filtered', filter, ...(name === 'recall' ? { query: 'orchid' } : {}) };
      const bad = await client.callTool({ name, arguments: args });
      assert.equal(bad.isError, true, name);
      assert.match(textOf(bad), /\/filter\/or\/0\/metadata\.project\/near/, name);
    }
  });
});
