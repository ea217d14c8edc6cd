// The filter expression on the faces: REST list (query string), recall and reflect (bodies), the MCP recall and
// list_memories tools; a bad expression answers 400 with the bad node's pointer; encrypted metadata is refused.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
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
