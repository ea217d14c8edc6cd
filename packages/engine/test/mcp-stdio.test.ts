// `mnemos mcp` (stdio) driven by the MCP SDK's own client: the SDK spawns the real binary (from source), which
// forwards each tool to a real engine over HTTP through @mnemos/client.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { REPO_ROOT, startTestEngine, type TestEngine } from './helpers/engine.js';
import { CLI_COMMAND } from './helpers/process.js';
import { stdioGuard } from '../src/mcp/stdio-guard.js';

let engine: TestEngine;
const clients: Client[] = [];

before(async () => {
  engine = await startTestEngine();
});
after(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await engine?.dispose();
});

async function connect(extraArgs: string[] = [], env: Record<string, string> = {}): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...CLI_COMMAND, 'mcp', ...extraArgs],
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', MNEMOS_URL: engine.url, ...env },
    cwd: REPO_ROOT,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'mnemos-stdio-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

function textOf(result: Awaited<ReturnType<Client['callTool']>>): string {
  const first = (result as CallToolResult).content[0];
  assert.ok(first && first.type === 'text');
  return first.text;
}

async function tool(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args });
  assert.notEqual(result.isError, true, textOf(result));
  return JSON.parse(textOf(result)) as Record<string, unknown>;
}

test('stdio: the seven tools are listed and each one works against the engine', async () => {
  const client = await connect();
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), [
    'delete_memories',
    'delete_memory',
    'entity',
    'list_banks',
    'list_memories',
    'recall',
    'reflect',
    'retain',
  ]);
  assert.equal(tools.find((t) => t.name === 'delete_memory')!.annotations?.destructiveHint, true);

  const stored = await tool(client, 'retain', {
    bank_id: 'stdio-bank',
    content: 'Grace keeps bees on her roof.',
    space: 'home',
  });
  const [id] = stored['memory_ids'] as string[];
  const recalled = await tool(client, 'recall', {
    bank_id: 'stdio-bank',
    query: 'What does Grace keep?',
    space: 'home',
  });
  assert.deepEqual(
    (recalled['results'] as Array<Record<string, unknown>>).map((r) => r['id']),
    [id],
  );
  const relevance = (recalled['results'] as Array<Record<string, unknown>>)[0]!['relevance'] as number;
  assert.ok(relevance > 0 && relevance < 0.99, String(relevance));
  const strict = await tool(client, 'recall', {
    bank_id: 'stdio-bank',
    query: 'What does Grace keep?',
    space: 'home',
    min_relevance: 0.99,
  });
  assert.deepEqual(strict['results'], [], 'min_relevance reaches the engine over HTTP');
  const outside = await tool(client, 'recall', { bank_id: 'stdio-bank', query: 'What does Grace keep?' });
  assert.deepEqual(outside['results'], []);
  assert.equal((await tool(client, 'list_memories', { bank_id: 'stdio-bank' }))['total'], 1);
  const grace = await tool(client, 'entity', { bank_id: 'stdio-bank', name: 'Grace', space: 'home' });
  assert.deepEqual(
    (grace['facts'] as Array<Record<string, unknown>>).map((f) => f['id']),
    [id],
  );
  const listed = await tool(client, 'entity', { bank_id: 'stdio-bank', space: 'home', limit: 1 });
  assert.equal(listed['total'], 1);
  const outsideSpace = await client.callTool({
    name: 'entity',
    arguments: { bank_id: 'stdio-bank', name: 'Grace', space: 'default' },
  });
  assert.match(textOf(outsideSpace), /entity_not_found/);
  const banks = await tool(client, 'list_banks', { q: 'stdio' });
  assert.deepEqual(
    (banks['banks'] as Array<Record<string, unknown>>).map((b) => b['bank_id']),
    ['stdio-bank'],
  );
  const reflected = await client.callTool({
    name: 'reflect',
    arguments: { bank_id: 'stdio-bank', query: 'What does Grace keep?' },
  });
  assert.equal(reflected.isError, true);
  assert.match(textOf(reflected), /llm_not_configured/);
  assert.equal((await tool(client, 'delete_memory', { bank_id: 'stdio-bank', memory_id: id }))['deleted_count'], 1);
  const gone = await client.callTool({ name: 'delete_memory', arguments: { bank_id: 'stdio-bank', memory_id: id } });
  assert.equal(gone.isError, true);
  assert.match(textOf(gone), /memory_not_found \(404\)/);
});

test('stdio: --bank fixes the bank; an unreachable engine is a readable tool error', async () => {
  const fixed = await connect(['--bank', 'stdio-fixed']);
  const retain = (await fixed.listTools()).tools.find((t) => t.name === 'retain')!;
  assert.deepEqual(retain.inputSchema.required, ['content']);
  await tool(fixed, 'retain', { content: 'Heidi runs marathons.' });
  const listed = await tool(fixed, 'list_memories', {});
  assert.equal(listed['total'], 1);

  const down = await connect([], { MNEMOS_URL: 'http://127.0.0.1:1' });
  const failed = await down.callTool({ name: 'list_banks', arguments: {} });
  assert.equal(failed.isError, true);
  assert.match(textOf(failed), /connection_error/);
});

test('stdio: a line that is not JSON, not JSON-RPC, or whose params do not fit its method gets a JSON-RPC error naming it', async () => {
  const child = spawn(process.execPath, [...CLI_COMMAND, 'mcp'], {
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', MNEMOS_URL: engine.url },
    cwd: REPO_ROOT,
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const lines = createInterface({ input: child.stdout });
  const answers = new Map<unknown, { error?: { code: number; message: string } }>();
  const allIn = new Promise<void>((resolve) => {
    lines.on('line', (line) => {
      const answer = JSON.parse(line) as { id: unknown; error?: { code: number; message: string } };
      answers.set(answer.id, answer);
      // The errors are written as their lines arrive, so they precede the answer to the last, good request.
      if (answer.id === 4) resolve();
    });
  });
  const send = [
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: 'x' },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 5 } },
    'not json',
    { id: 3 },
    { jsonrpc: '2.0', id: 4, method: 'tools/list' },
  ];
  for (const m of send) child.stdin.write(`${typeof m === 'string' ? m : JSON.stringify(m)}\n`);
  await allIn;
  child.kill();
  assert.equal(answers.get(1)?.error?.code, -32602);
  assert.match(answers.get(1)?.error?.message ?? '', /\/params: .*expected object/);
  assert.equal(answers.get(2)?.error?.code, -32602);
  assert.match(answers.get(2)?.error?.message ?? '', /\/params\/name: .*expected string/);
  assert.equal(answers.get(null)?.error?.code, -32700);
  assert.equal(answers.get(3)?.error?.code, -32600);
  assert.equal(answers.get(4)?.error, undefined, 'a good request after the bad ones is answered');
});

test('stdio guard: a line split inside a character, or across many chunks, passes whole and unchanged', async () => {
  const answers: string[] = [];
  const guard = stdioGuard((line) => answers.push(line));
  const passed: string[] = [];
  guard.on('data', (chunk: Buffer) => passed.push(chunk.toString('utf8')));
  const line = JSON.stringify({
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/list',
    params: { note: 'Zoë — 東京 '.repeat(50) },
  });
  const bytes = Buffer.from(`${line}\n`, 'utf8');
  // Cut every 7 bytes: many cuts fall inside a multi-byte character.
  for (let i = 0; i < bytes.length; i += 7) guard.write(bytes.subarray(i, i + 7));
  guard.end();
  await new Promise((resolve) => guard.on('end', resolve));
  assert.deepEqual(answers, []);
  assert.equal(passed.join(''), `${line}\n`);
});
