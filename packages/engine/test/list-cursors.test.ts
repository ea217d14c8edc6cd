// A list's next_cursor is bound to the list that gave it: the tenant, the bank and every filter. Passed to another
// bank, another tenant, or the same list with a filter changed, it is a 400 naming /query/cursor; edited, it is a 400
// too (it is signed). The same list with another page size pages on.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';

const TOKEN = 'list-cursor-test-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };
let engine: TestEngine;

interface Page {
  items?: Array<{ id: string }>;
  banks?: Array<{ bank_id: string }>;
  next_cursor: string | null;
}
interface Problem {
  code: string;
  detail: string;
  errors?: Array<{ pointer: string; detail: string }>;
}

const get = <T>(path: string) => call<T>(engine.url, 'GET', path, undefined, auth);

async function retain(tenant: string, bank: string, content: string, extra: Record<string, unknown> = {}) {
  const r = await call(engine.url, 'POST', `/v1/${tenant}/banks/${bank}/memories`, { content, ...extra }, auth);
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

before(async () => {
  engine = await startTestEngine({ MNEMOS_API_AUTH_TOKEN: TOKEN });
  for (const [tenant, bank] of [
    ['acme', 'alpha'],
    ['acme', 'beta'],
    ['other', 'alpha'],
  ] as const) {
    for (let i = 0; i < 3; i++) {
      await retain(tenant, bank, `Note ${i} of ${tenant} ${bank} about the harbour.`, {
        tags: ['harbour'],
        timestamp: `2024-03-0${i + 1}T10:00:00Z`,
      });
    }
  }
});
after(async () => {
  await engine?.dispose();
});

function assertCursorRefused(r: { status: number; body: Problem }, what: string): void {
  assert.equal(r.status, 400, `${what}: ${JSON.stringify(r.body)}`);
  assert.equal(r.body.code, 'validation_failed', what);
  assert.equal(r.body.errors?.[0]?.pointer, '/query/cursor', what);
  assert.match(r.body.detail, /cursor/, what);
}

describe('a list cursor is bound to its tenant, bank and filters', () => {
  const filters = 'tags=harbour&since=2024-01-01T00:00:00Z&q=harbour';

  it('a memories cursor passed to another bank, another tenant or the same list with a filter changed is a 400', async () => {
    const first = await get<Page>(`/v1/acme/banks/alpha/memories?limit=1&${filters}`);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const cursor = encodeURIComponent(first.body.next_cursor!);

    const elsewhere: Array<[string, string]> = [
      ['another bank of the tenant', `/v1/acme/banks/beta/memories?limit=1&${filters}`],
      ['the same bank name in another tenant', `/v1/other/banks/alpha/memories?limit=1&${filters}`],
      ['the Hindsight path of another bank', `/v1/acme/banks/beta/memories/list?limit=1&${filters}`],
      ['no filters', '/v1/acme/banks/alpha/memories?limit=1'],
      ['other tags', `/v1/acme/banks/alpha/memories?limit=1&${filters.replace('tags=harbour', 'tags=pier')}`],
      ['another since', `/v1/acme/banks/alpha/memories?limit=1&${filters.replace('2024-01-01', '2024-01-02')}`],
      ['an until added', `/v1/acme/banks/alpha/memories?limit=1&${filters}&until=2030-01-01T00:00:00Z`],
      ['other words', `/v1/acme/banks/alpha/memories?limit=1&${filters.replace('q=harbour', 'q=note')}`],
      ['a space', `/v1/acme/banks/alpha/memories?limit=1&${filters}&space=default`],
      ['a type', `/v1/acme/banks/alpha/memories?limit=1&${filters}&type=experience`],
      ['a state', `/v1/acme/banks/alpha/memories?limit=1&${filters}&state=valid`],
      ['a document', `/v1/acme/banks/alpha/memories?limit=1&${filters}&document_id=doc-1`],
    ];
    for (const [what, path] of elsewhere) {
      assertCursorRefused(await get<Problem>(`${path}&cursor=${cursor}`), what);
    }

    // The list that gave it pages on, whatever the page size, on either path.
    for (const path of ['/memories?limit=2', '/memories/list?limit=1']) {
      const next = await get<Page>(`/v1/acme/banks/alpha${path}&${filters}&cursor=${cursor}`);
      assert.equal(next.status, 200, JSON.stringify(next.body));
      assert.equal(next.body.items!.length, path.endsWith('2') ? 2 : 1);
      assert.ok(!next.body.items!.some((m) => m.id === first.body.items![0]!.id));
    }
  });

  it('a banks cursor passed to another tenant or with other words is a 400', async () => {
    const first = await get<Page>('/v1/acme/banks?limit=1');
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const cursor = encodeURIComponent(first.body.next_cursor!);
    assertCursorRefused(await get<Problem>(`/v1/other/banks?limit=1&cursor=${cursor}`), 'another tenant');
    assertCursorRefused(await get<Problem>(`/v1/acme/banks?limit=1&q=alp&cursor=${cursor}`), 'other words');
    const next = await get<Page>(`/v1/acme/banks?limit=1&cursor=${cursor}`);
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.notEqual(next.body.banks![0]!.bank_id, first.body.banks![0]!.bank_id);
  });

  it('an edited cursor is a 400: its key cannot be forged', async () => {
    const first = await get<Page>('/v1/acme/banks/alpha/memories?limit=1');
    const cursor = first.body.next_cursor!;
    const [payload = '', ...rest] = cursor.split('.');
    const key = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const edited = Buffer.from(JSON.stringify({ ...key, seq: Number(key['seq']) + 1 })).toString('base64url');
    for (const forged of [[edited, ...rest].join('.'), payload, `${cursor}x`]) {
      const r = await get<Problem>(`/v1/acme/banks/alpha/memories?limit=1&cursor=${encodeURIComponent(forged)}`);
      assertCursorRefused(r, `forged ${forged.slice(-12)}`);
    }
  });

  it("MCP list_memories refuses another bank's cursor the same way", async () => {
    const first = await get<Page>('/v1/acme/banks/alpha/memories?limit=1');
    const client = new Client({ name: 'mnemos-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/v1/acme/mcp', engine.url), { requestInit: { headers: auth } }),
    );
    try {
      const list = (args: Record<string, unknown>) =>
        client.callTool({ name: 'list_memories', arguments: args }) as Promise<CallToolResult>;
      const refused = await list({ bank_id: 'beta', limit: 1, cursor: first.body.next_cursor });
      assert.equal(refused.isError, true);
      assert.match(JSON.stringify(refused.content), /cursor/);
      const paged = await list({ bank_id: 'alpha', limit: 1, cursor: first.body.next_cursor });
      assert.notEqual(paged.isError, true, JSON.stringify(paged.content));
    } finally {
      await client.close();
    }
  });
});
