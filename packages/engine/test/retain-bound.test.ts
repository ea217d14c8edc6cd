import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';

/**
 * A retain reports the new memories it stored (what a gateway's quota counts), and a caller can bound them with
 * X-Mnemos-Max-New-Memories: over the bound nothing is stored and the answer names the true count.
 */

let engine: TestEngine;
before(async () => {
  engine = await startTestEngine();
});
after(async () => {
  await engine?.dispose();
});

/** Text the engine cuts into several memories (paragraphs of about 1,000 characters). */
const longText = (paragraphs: number, topic: string): string =>
  Array.from(
    { length: paragraphs },
    (_, i) => `Note ${i} on ${topic}: ${'the tide comes in twice a day, '.repeat(32)}`,
  ).join('\n\n');

async function total(bank: string): Promise<number> {
  const list = await call<{ total: number }>(engine.url, 'GET', `/v1/default/banks/${bank}/memories?limit=1`);
  return list.body.total;
}

describe('retain bound and stored count', () => {
  it('reports stored_count: new memories after chunking, none for content already stored', async () => {
    const first = await call<{ stored_count: number; memory_ids: string[] }>(
      engine.url,
      'POST',
      '/v1/default/banks/sc/memories',
      { content: longText(5, 'tides') },
    );
    assert.equal(first.status, 200);
    assert.ok(first.body.stored_count > 1);
    assert.equal(first.body.stored_count, first.body.memory_ids.length);
    const again = await call<{ stored_count: number }>(engine.url, 'POST', '/v1/default/banks/sc/memories', {
      items: [{ content: longText(5, 'tides') }, { content: 'The harbour master is called Ines.' }],
    });
    assert.equal(again.body.stored_count, 1);
    assert.equal(await total('sc'), first.body.stored_count + 1);
  });

  it('refuses a retain over the bound with 413, stores nothing, and names the count', async () => {
    const sails = { content: longText(5, 'sails') };
    const over = await call<{ code: string }>(engine.url, 'POST', '/v1/default/banks/bd/memories', sails, {
      'x-mnemos-max-new-memories': '2',
    });
    assert.equal(over.status, 413);
    assert.equal(over.body.code, 'too_many_memories');
    assert.match(over.headers.get('content-type') ?? '', /problem\+json/);
    const wouldStore = Number(over.headers.get('x-mnemos-would-store'));
    assert.ok(wouldStore > 2);
    assert.equal(await total('bd'), 0);
    const within = await call<{ stored_count: number }>(engine.url, 'POST', '/v1/default/banks/bd/memories', sails, {
      'x-mnemos-max-new-memories': String(wouldStore),
    });
    assert.equal(within.status, 200);
    assert.equal(within.body.stored_count, wouldStore);
  });

  it('bounds async retains by their pieces before queueing them', async () => {
    const oars = { content: longText(4, 'oars'), async: true };
    const over = await call<{ code: string }>(engine.url, 'POST', '/v1/default/banks/ab/memories', oars, {
      'x-mnemos-max-new-memories': '1',
    });
    assert.equal(over.status, 413);
    assert.equal(over.body.code, 'too_many_memories');
    const jobs = await engine.engine.db.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs');
    assert.equal(jobs[0]?.n ?? 0, 0);
  });

  it('names the most memories an async retain under a bound stores, the count a sync retain stores', async () => {
    const text = longText(4, 'buoys');
    const bound = { 'x-mnemos-max-new-memories': '100' };
    const later = await call(
      engine.url,
      'POST',
      '/v1/default/banks/ac/memories',
      { content: text, async: true },
      bound,
    );
    assert.equal(later.status, 200);
    const now = await call<{ stored_count: number }>(engine.url, 'POST', '/v1/default/banks/as/memories', {
      content: text,
    });
    assert.ok(now.body.stored_count > 1);
    assert.equal(later.headers.get('x-mnemos-would-store'), String(now.body.stored_count));
    const unbounded = await call(engine.url, 'POST', '/v1/default/banks/ac/memories', { content: 'x', async: true });
    assert.equal(unbounded.headers.get('x-mnemos-would-store'), null);
  });

  it('MCP retains of one request share its bound: a call over what the others left stores nothing', async () => {
    const pieces = (
      await call<{ stored_count: number }>(engine.url, 'POST', '/v1/default/banks/mx/memories', {
        content: longText(3, 'anchors'),
      })
    ).body.stored_count;
    const retain = (id: number, content: string) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'retain', arguments: { bank_id: 'mb', content } },
    });
    const batch = await call<Array<{ id: number; result: { isError?: boolean; content: Array<{ text: string }> } }>>(
      engine.url,
      'POST',
      '/v1/default/mcp',
      [retain(1, longText(3, 'anchors')), retain(2, longText(3, 'masts'))],
      { accept: 'application/json, text/event-stream', 'x-mnemos-max-new-memories': String(pieces + 1) },
    );
    assert.equal(batch.status, 200);
    const results = new Map(batch.body.map((m) => [m.id, m.result]));
    assert.notEqual(results.get(1)?.isError, true);
    assert.equal(results.get(2)?.isError, true);
    assert.match(results.get(2)?.content[0]?.text ?? '', /too_many_memories/);
    assert.equal(await total('mb'), pieces);
  });

  it('answers 400 to a bound that is not a whole number', async () => {
    const bad = await call<{ code: string }>(
      engine.url,
      'POST',
      '/v1/default/banks/bb/memories',
      { content: 'x' },
      {
        'x-mnemos-max-new-memories': '-1',
      },
    );
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'validation_failed');
    assert.equal(await total('bb'), 0);
  });
});
