// An engine without an LLM: reflect answers 503 llm_not_configured; retain (sync and async) and recall keep working,
// and no extraction is enqueued.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';

let engine: TestEngine;

before(async () => {
  engine = await startTestEngine();
});
after(async () => {
  await engine?.dispose();
});

test('reflect answers 503 llm_not_configured, on both paths', async () => {
  for (const [path, body] of [
    ['/v1/default/banks/plain/reflect', { query: 'What do you know?' }],
    ['/v1/reflect', { bank_id: 'plain', query: 'What do you know?', include: { facts: {} } }],
  ] as const) {
    const r = await call<{ code: string; status: number; detail: string }>(engine.url, 'POST', path, body);
    assert.equal(r.status, 503);
    assert.equal(r.body.code, 'llm_not_configured');
    assert.match(r.body.detail, /MNEMOS_API_LLM_PROVIDER/);
    assert.equal(r.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  }
  const version = await call<{ features: { llm: boolean } }>(engine.url, 'GET', '/version');
  assert.equal(version.body.features.llm, false);
});

test('retain stores raw memories, recall finds them, and nothing is queued for extraction', async () => {
  const r = await call<{ memory_ids: string[]; operation_id?: string; usage: { total_tokens: number } }>(
    engine.url,
    'POST',
    '/v1/default/banks/plain/memories',
    { content: 'Nina keeps bees on her roof in Ghent.' },
  );
  assert.equal(r.status, 200);
  assert.equal(r.body.operation_id, undefined);
  assert.equal(r.body.usage.total_tokens, 0);
  const recall = await call<{ results: Array<{ id: string; type: string }> }>(
    engine.url,
    'POST',
    '/v1/default/banks/plain/memories/recall',
    { query: 'bees' },
  );
  assert.equal(recall.body.results[0]?.id, r.body.memory_ids[0]);
  assert.equal(recall.body.results[0]?.type, 'raw');
  const jobs = await engine.engine.db.query<{ n: number | string }>('SELECT count(*) AS n FROM jobs');
  assert.equal(Number(jobs[0]!.n), 0);
});

test('async retain works without an LLM: the operation completes with the stored ids', async () => {
  const r = await call<{ async: boolean; operation_id: string }>(
    engine.url,
    'POST',
    '/v1/default/banks/plain/memories',
    {
      items: [
        { content: 'Omar repairs clocks.' },
        { content: 'Omar repairs clocks.' },
        { content: 'Pia sails on Sundays.' },
      ],
      async: true,
    },
  );
  assert.equal(r.status, 200);
  assert.equal(r.body.async, true);
  let op: { status: string; memory_ids: string[]; kind: string } | undefined;
  for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
    op = (
      await call<{ status: string; memory_ids: string[]; kind: string }>(
        engine.url,
        'GET',
        `/v1/default/operations/${r.body.operation_id}`,
      )
    ).body;
    if (op.status === 'completed' || op.status === 'failed') break;
    await new Promise((res) => setTimeout(res, 50));
  }
  assert.equal(op?.status, 'completed');
  assert.equal(op?.kind, 'retain');
  assert.equal(op?.memory_ids.length, 2);
  const list = await call<{ items: Array<{ id: string; text: string }> }>(
    engine.url,
    'GET',
    '/v1/default/banks/plain/memories?q=Omar',
  );
  assert.deepEqual(
    list.body.items.map((m) => m.id),
    [op.memory_ids[0]],
  );
  // Another tenant cannot see the operation (this engine serves only "default").
  const other = await call(engine.url, 'GET', `/v1/other/operations/${r.body.operation_id}`);
  assert.equal(other.status, 404);
});
