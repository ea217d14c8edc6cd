// The MCP server over streamable HTTP (POST /mcp, /mcp/{bank}, /v1/{tenant}/mcp), driven by the MCP SDK's own client
// against a real engine.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { call, REPO_ROOT, startTestEngine, type TestEngine } from './helpers/engine.js';
import { startFakeLlm, type FakeLlm } from './helpers/fake-llm.js';

let engine: TestEngine;
let llm: FakeLlm;
const clients: Client[] = [];

before(async () => {
  llm = await startFakeLlm();
  engine = await startTestEngine({
    MNEMOS_API_LLM_PROVIDER: 'openai',
    MNEMOS_API_LLM_BASE_URL: llm.openaiBaseUrl,
    MNEMOS_API_LLM_MODEL: 'fake',
    MNEMOS_API_LLM_API_KEY: 'x',
  });
  // No extracted facts: each bank holds exactly the memories the tests retain.
  llm.always = { purpose: 'extract', behaviour: { kind: 'content', content: { facts: [] } } };
});
after(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await engine?.dispose();
  await llm?.stop();
});

async function connect(path: string): Promise<Client> {
  const client = new Client({ name: 'mnemos-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(path, engine.url)));
  clients.push(client);
  return client;
}

function textOf(result: Awaited<ReturnType<Client['callTool']>>): string {
  const content = (result as CallToolResult).content;
  const first = content[0];
  assert.ok(first && first.type === 'text', 'a text answer');
  return first.text;
}

async function tool(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args });
  assert.notEqual(result.isError, true, textOf(result));
  return JSON.parse(textOf(result)) as Record<string, unknown>;
}

test('lists seven tools with JSON schemas, descriptions and hints; /version shows mcp enabled', async () => {
  const client = await connect('/mcp');
  const { tools } = await client.listTools();
  const byName = new Map(tools.map((t) => [t.name, t]));
  assert.deepEqual([...byName.keys()].sort(), [
    'delete_memories',
    'delete_memory',
    'entity',
    'list_banks',
    'list_memories',
    'recall',
    'reflect',
    'retain',
  ]);
  for (const t of tools) {
    assert.ok((t.description ?? '').length > 40, `${t.name} has a description`);
    assert.equal(t.inputSchema.type, 'object');
    assert.equal(typeof t.annotations?.readOnlyHint, 'boolean', `${t.name} has hints`);
  }
  assert.deepEqual(byName.get('retain')!.inputSchema.required, ['bank_id', 'content']);
  assert.equal(byName.get('recall')!.annotations?.readOnlyHint, true);
  assert.equal(byName.get('delete_memory')!.annotations?.destructiveHint, true);
  assert.equal(byName.get('retain')!.annotations?.readOnlyHint, false);
  assert.equal(byName.get('list_banks')!.inputSchema.required, undefined);
  const version = await call<{ features: Record<string, unknown> }>(engine.url, 'GET', '/version');
  assert.equal(version.body.features['mcp'], true);
});

test('each tool works: retain, recall, list_memories, list_banks, delete_memory, reflect', async () => {
  const client = await connect('/mcp');
  const stored = await tool(client, 'retain', {
    bank_id: 'mcp-alice',
    content: 'Alice prefers green tea over coffee.',
    tags: ['drinks'],
  });
  const [id] = stored['memory_ids'] as string[];
  assert.ok(id);
  await tool(client, 'retain', { bank_id: 'mcp-alice', content: 'Alice lives in Lyon.', space: 'acme' });

  const recalled = await tool(client, 'recall', { bank_id: 'mcp-alice', query: 'What does Alice drink?' });
  const results = recalled['results'] as Array<Record<string, unknown>>;
  assert.equal(results.length, 1, 'the acme-space memory is not recalled without space');
  assert.equal(results[0]!['text'], 'Alice prefers green tea over coffee.');
  assert.equal(results[0]!['id'], id);
  assert.deepEqual(results[0]!['tags'], ['drinks']);
  const inAcme = await tool(client, 'recall', { bank_id: 'mcp-alice', query: 'Where does Alice live?', space: 'acme' });
  assert.deepEqual(
    (inAcme['results'] as Array<Record<string, unknown>>).map((r) => r['text']),
    ['Alice lives in Lyon.'],
  );

  const listed = await tool(client, 'list_memories', { bank_id: 'mcp-alice' });
  assert.equal(listed['total'], 2);
  const entities = await tool(client, 'entity', { bank_id: 'mcp-alice', prefix: 'ly', space: 'acme' });
  assert.deepEqual(
    (entities['items'] as Array<Record<string, unknown>>).map((e) => e['name']),
    ['Lyon'],
  );
  const alice = await tool(client, 'entity', { bank_id: 'mcp-alice', name: 'alice' });
  assert.deepEqual(
    (alice['facts'] as Array<Record<string, unknown>>).map((f) => f['text']),
    ['Alice lives in Lyon.', 'Alice prefers green tea over coffee.'],
    'every space, latest first',
  );
  const unknown = await client.callTool({ name: 'entity', arguments: { bank_id: 'mcp-alice', name: 'Zed' } });
  assert.equal(unknown.isError, true);
  assert.match(textOf(unknown), /entity_not_found \(404\)/);
  const banks = await tool(client, 'list_banks', {});
  assert.ok((banks['banks'] as Array<Record<string, unknown>>).some((b) => b['bank_id'] === 'mcp-alice'));

  const deleted = await tool(client, 'delete_memory', { bank_id: 'mcp-alice', memory_id: id });
  assert.equal(deleted['deleted_count'], 1);
  const again = await client.callTool({ name: 'delete_memory', arguments: { bank_id: 'mcp-alice', memory_id: id } });
  assert.equal(again.isError, true);
  assert.match(textOf(again), /memory_not_found/);

  await tool(client, 'retain', { bank_id: 'mcp-alice', content: 'Alice adopted a grey cat named Pixel.' });
  const reflected = await tool(client, 'reflect', {
    bank_id: 'mcp-alice',
    query: 'What is the name of the cat Alice adopted?',
  });
  assert.ok(String(reflected['text']).length > 0);
  const cited = reflected['citations'] as string[];
  assert.ok(cited.length > 0, 'reflect cites memories');
  const bankIds = (
    (await tool(client, 'list_memories', { bank_id: 'mcp-alice' }))['items'] as Array<{ id: string }>
  ).map((m) => m.id);
  for (const c of cited) assert.ok(bankIds.includes(c));
});

test("recall shows each result's relevance and takes min_relevance", async () => {
  const client = await connect('/mcp');
  for (const content of ['Bruno lives in Lisbon.', 'The parking garage closes at midnight.']) {
    await tool(client, 'retain', { bank_id: 'mcp-relevance', content });
  }
  const all = await tool(client, 'recall', { bank_id: 'mcp-relevance', query: 'Where does Bruno live?' });
  const results = all['results'] as Array<Record<string, unknown>>;
  assert.equal(results.length, 2);
  assert.equal(results[0]!['text'], 'Bruno lives in Lisbon.');
  const [top, other] = results.map((r) => r['relevance'] as number);
  assert.ok(top! >= 0.5 && top! <= 1, String(top));
  assert.ok(other! < top!, `${other} < ${top}`);
  const kept = await tool(client, 'recall', {
    bank_id: 'mcp-relevance',
    query: 'Where does Bruno live?',
    min_relevance: 0.5,
  });
  assert.deepEqual(
    (kept['results'] as Array<Record<string, unknown>>).map((r) => r['text']),
    ['Bruno lives in Lisbon.'],
  );
  const bad = await client.callTool({
    name: 'recall',
    arguments: { bank_id: 'mcp-relevance', query: 'Where does Bruno live?', min_relevance: 2 },
  });
  assert.equal(bad.isError, true);
});

test('retain takes supersedes; recall and list_memories answer current memories, as_of and include_superseded', async () => {
  const client = await connect('/mcp');
  const bank = 'mcp-validity';
  const first = await tool(client, 'retain', {
    bank_id: bank,
    content: 'Nora lives in Oslo.',
    timestamp: '2023-01-01',
  });
  const [old] = first['memory_ids'] as string[];
  const second = await tool(client, 'retain', {
    bank_id: bank,
    content: 'Nora moved to Bergen.',
    timestamp: '2024-01-01',
    supersedes: [old],
  });
  const [now] = second['memory_ids'] as string[];
  const texts = (answer: Record<string, unknown>, key: 'results' | 'items') =>
    (answer[key] as Array<Record<string, unknown>>).map((r) => r['text']);
  const ask = (extra: Record<string, unknown>) =>
    tool(client, 'recall', { bank_id: bank, query: 'Where does Nora live?', ...extra });
  assert.deepEqual(texts(await ask({}), 'results'), ['Nora moved to Bergen.']);
  assert.deepEqual(texts(await ask({ as_of: '2023-06-01T00:00:00Z' }), 'results'), ['Nora lives in Oslo.']);
  const all = (await ask({ include_superseded: true }))['results'] as Array<Record<string, unknown>>;
  assert.equal(all.find((r) => r['id'] === old)?.['superseded_by'], now);
  assert.deepEqual(texts(await tool(client, 'list_memories', { bank_id: bank }), 'items'), ['Nora moved to Bergen.']);
  const unknown = await client.callTool({
    name: 'retain',
    arguments: { bank_id: bank, content: 'Nora lives in Tromso.', supersedes: [crypto.randomUUID()] },
  });
  assert.equal(unknown.isError, true);
  assert.match(textOf(unknown), /supersedes/);
});

test('retain takes expires_at: recall shows it, a past one forgets at once, a bad one is an error', async () => {
  const client = await connect('/mcp');
  const bank = 'mcp-expiry';
  await tool(client, 'retain', {
    bank_id: bank,
    content: 'Nora parks in bay 12 this week.',
    expires_at: '2099-01-01T00:00:00Z',
  });
  await tool(client, 'retain', { bank_id: bank, content: 'Nora parked in bay 3 once.', expires_at: '2001-01-01' });
  const recalled = (await tool(client, 'recall', { bank_id: bank, query: 'Where does Nora park?' }))[
    'results'
  ] as Array<Record<string, unknown>>;
  assert.deepEqual(
    recalled.map((r) => [r['text'], r['expires_at']]),
    [['Nora parks in bay 12 this week.', '2099-01-01T00:00:00.000Z']],
  );
  const bad = await client.callTool({
    name: 'retain',
    arguments: { bank_id: bank, content: 'Nora parks anywhere.', expires_at: 'next week' },
  });
  assert.equal(bad.isError, true);
  assert.match(textOf(bad), /expires_at/);
});

test('/mcp/{bank} fixes the bank: tools take no bank_id', async () => {
  const client = await connect('/mcp/fixed%40bank');
  const { tools } = await client.listTools();
  const retain = tools.find((t) => t.name === 'retain')!;
  assert.deepEqual(retain.inputSchema.required, ['content']);
  assert.equal((retain.inputSchema.properties ?? {})['bank_id'], undefined);
  await tool(client, 'retain', { content: 'The fixed bank remembers this.' });
  const listed = await call<{ total: number }>(engine.url, 'GET', '/v1/default/banks/fixed%40bank/memories');
  assert.equal(listed.body.total, 1);
  const recalled = await tool(client, 'recall', { query: 'What does the fixed bank remember?' });
  assert.equal((recalled['results'] as unknown[]).length, 1);
});

test('/v1/default/mcp serves the default tenant; other tenants need a multi-tenant engine', async () => {
  const client = await connect('/v1/default/mcp/mcp-alice');
  const listed = await tool(client, 'list_memories', {});
  assert.equal(listed['total'], 2);
  const other = await call(
    engine.url,
    'POST',
    '/v1/acme/mcp',
    { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    { accept: 'application/json, text/event-stream' },
  );
  assert.equal(other.status, 404);
  assert.equal(other.body['code'], 'tenant_not_found');
});

test('invalid tool arguments are tool-call errors, malformed requests are problem+json 4xx', async () => {
  const client = await connect('/mcp');
  const bad = await client.callTool({ name: 'retain', arguments: { bank_id: 'bad bank!', content: 'x' } });
  assert.equal(bad.isError, true);
  const empty = await client.callTool({ name: 'recall', arguments: { bank_id: 'mcp-alice', query: '???' } });
  assert.equal(empty.isError, true);
  assert.match(textOf(empty), /validation_failed/);

  const accept = { accept: 'application/json, text/event-stream' };
  for (const [method, body, headers, status] of [
    ['GET', undefined, accept, 405],
    ['DELETE', undefined, accept, 405],
    ['POST', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { accept: 'application/json' }, 406],
    ['POST', { hello: 'world' }, accept, 400],
    ['POST', [], accept, 400],
    ['POST', '{not json', { ...accept, 'content-type': 'application/json' }, 400],
  ] as const) {
    const answer = await call(engine.url, method, '/mcp', body, headers);
    assert.equal(answer.status, status, `${method} ${JSON.stringify(body)}`);
    assert.match(answer.headers.get('content-type') ?? '', /application\/problem\+json/);
  }
  const badBank = await call(
    engine.url,
    'POST',
    '/mcp/bad%20bank',
    { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    accept,
  );
  assert.equal(badBank.status, 400);
});

test('a request whose params do not fit its method is a 400 problem naming the field, not a JSON-RPC internal error', async () => {
  const accept = { accept: 'application/json, text/event-stream' };
  const cases: Array<[unknown, string]> = [
    [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'recall', arguments: 'query' } },
      '/params/arguments',
    ],
    [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { arguments: {} } }, '/params/name'],
    [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: 5 }, '/params'],
    [
      [
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_banks', arguments: [] } },
      ],
      '/1/params/arguments',
    ],
  ];
  for (const [body, pointer] of cases) {
    const answer = await call(engine.url, 'POST', '/mcp', body, accept);
    assert.equal(answer.status, 400, `${JSON.stringify(body)}: ${JSON.stringify(answer.body)}`);
    assert.match(answer.headers.get('content-type') ?? '', /application\/problem\+json/);
    assert.equal(answer.body['code'], 'validation_failed');
    assert.deepEqual(
      (answer.body['errors'] as Array<{ pointer: string }>).map((e) => e.pointer),
      [pointer],
    );
  }
  // A well-formed call beside them still works, and unknown methods stay JSON-RPC's "method not found".
  const unknown = await call(
    engine.url,
    'POST',
    '/mcp',
    { jsonrpc: '2.0', id: 3, method: 'no/such', params: {} },
    accept,
  );
  assert.equal(unknown.status, 200);
  assert.equal((unknown.body['error'] as { code: number }).code, -32601);
});

test('examples/mcp-client.ts runs against the engine', async () => {
  const child = spawn(
    process.execPath,
    ['--conditions=source', '--import', 'tsx', resolve(REPO_ROOT, 'examples/mcp-client.ts'), engine.url],
    {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const code = await new Promise<number | null>((done) => child.on('close', done));
  assert.equal(code, 0, output);
  assert.match(
    output,
    /tools: retain, recall, reflect, list_memories, delete_memory, delete_memories, entity, list_banks/,
  );
  assert.match(output, /Bob is allergic to peanuts/);
});

test('delete_memories counts with dry_run, then deletes what the filter passes; a missing filter is a tool error', async () => {
  const client = await connect('/mcp');
  for (const content of ['Zoe keeps a journal.', 'Zoe keeps bees.', 'Zoe rides a tram.'])
    await tool(client, 'retain', { bank_id: 'mcp-bulk', content, tags: content.includes('keeps') ? ['keeps'] : [] });
  const filter = { tags: { contains: 'keeps' } };
  const dry = await tool(client, 'delete_memories', { bank_id: 'mcp-bulk', filter, dry_run: true });
  assert.equal(dry['deleted_count'], 2);
  assert.equal((await tool(client, 'list_memories', { bank_id: 'mcp-bulk' }))['total'], 3);
  const done = await tool(client, 'delete_memories', { bank_id: 'mcp-bulk', filter });
  assert.equal(done['deleted_count'], 2);
  assert.equal((await tool(client, 'list_memories', { bank_id: 'mcp-bulk' }))['total'], 1);
  const bad = await client.callTool({
    name: 'delete_memories',
    arguments: { bank_id: 'mcp-bulk', filter: { tags: { gt: 1 } } },
  });
  assert.equal(bad.isError, true);
  assert.match(textOf(bad), /filter/);
  await client.close();
});
