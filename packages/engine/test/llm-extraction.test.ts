// Fact extraction after retain, through the real OpenAI provider code against the fake LLM server: typed, dated facts
// linked to their source, corrections superseding, malformed/refused/failed answers retried then reported, async retain,
// and token usage per operation and per bank.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';
import { startFakeLlm, type FakeLlm } from './helpers/fake-llm.js';

let fake: FakeLlm;
let engine: TestEngine;
let n = 0;
const bank = () => `llm-x-${++n}`;

interface Memory {
  id: string;
  type: string;
  text: string;
  source_id: string | null;
  occurred_at: string | null;
  entities: string[];
  superseded_by: string | null;
  valid_to: string | null;
}
interface Operation {
  status: string;
  facts_count: number;
  fact_ids: string[];
  memory_ids: string[];
  errors: Array<{ error: string; attempts: number }>;
  error_message?: string;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number };
}

before(async () => {
  fake = await startFakeLlm();
  engine = await startTestEngine({
    MNEMOS_API_LLM_PROVIDER: 'openai',
    MNEMOS_API_LLM_MODEL: 'fake-model',
    MNEMOS_API_LLM_API_KEY: 'test-key',
    MNEMOS_API_LLM_BASE_URL: fake.openaiBaseUrl,
    MNEMOS_API_LLM_TIMEOUT_MS: '1000',
    MNEMOS_API_LLM_MAX_RETRIES: '2',
    MNEMOS_API_LLM_CONCURRENCY: '4',
  });
});

after(async () => {
  await engine?.dispose();
  await fake?.stop();
});

async function settle(operationId: string, timeoutMs = 30_000): Promise<Operation> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await call<Operation>(engine.url, 'GET', `/v1/default/operations/${operationId}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    if (r.body.status === 'completed' || r.body.status === 'failed') return r.body;
    if (Date.now() > deadline) assert.fail(`operation ${operationId} still ${r.body.status}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

async function retain(bankId: string, body: Record<string, unknown>) {
  const r = await call<{ memory_ids: string[]; operation_id?: string; async: boolean; usage?: Record<string, number> }>(
    engine.url,
    'POST',
    `/v1/default/banks/${bankId}/memories`,
    body,
  );
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

async function list(bankId: string, query = ''): Promise<Memory[]> {
  const r = await call<{ items: Memory[] }>(
    engine.url,
    'GET',
    `/v1/default/banks/${bankId}/memories?limit=1000${query}`,
  );
  assert.equal(r.status, 200);
  return r.body.items;
}

test('retain is recallable at once; extraction adds typed, dated facts with entities, linked to the raw memory', async () => {
  const b = bank();
  const out = await retain(b, {
    content: 'Alice went to Lisbon yesterday. Alice loves sardines.',
    timestamp: '2024-03-10T09:00:00Z',
  });
  assert.equal(out.async, false);
  assert.ok(out.operation_id, 'sync retain reports the extraction operation');
  assert.deepEqual(out.usage && { i: out.usage['input_tokens'], o: out.usage['output_tokens'] }, { i: 0, o: 0 });
  const rawId = out.memory_ids[0]!;

  const op = await settle(out.operation_id);
  assert.equal(op.status, 'completed', JSON.stringify(op));
  assert.equal(op.facts_count, 2);
  assert.ok(op.usage.input_tokens > 0 && op.usage.output_tokens > 0);

  const memories = await list(b);
  const facts = memories.filter((m) => m.type !== 'raw');
  assert.equal(facts.length, 2);
  const trip = facts.find((f) => f.type === 'experience')!;
  assert.ok(trip, JSON.stringify(facts));
  assert.equal(trip.source_id, rawId);
  assert.equal(trip.occurred_at, '2024-03-09T00:00:00.000Z', 'relative date resolved against the retain timestamp');
  assert.match(trip.text, /2024-03-09/);
  assert.ok(trip.entities.includes('Alice') && trip.entities.includes('Lisbon'));
  const taste = facts.find((f) => f.type === 'preference')!;
  assert.equal(taste.source_id, rawId);
  assert.equal(taste.occurred_at, '2024-03-10T09:00:00.000Z', 'undated facts take the raw memory date');

  const recall = await call<{ results: Memory[] }>(engine.url, 'POST', `/v1/default/banks/${b}/memories/recall`, {
    query: 'Where did Alice travel?',
  });
  assert.ok(recall.body.results.some((r) => r.type === 'experience'));

  const stats = await call<{
    usage: { input_tokens: number; output_tokens: number; total_tokens: number };
    nodes_by_fact_type: Record<string, number>;
  }>(engine.url, 'GET', `/v1/default/banks/${b}/stats`);
  assert.equal(stats.body.usage.input_tokens, op.usage.input_tokens);
  assert.equal(stats.body.usage.output_tokens, op.usage.output_tokens);
  assert.equal(stats.body.nodes_by_fact_type['raw'], 1);

  // Deleting the raw memory takes its facts with it.
  const del = await call<{ deleted_count: number }>(engine.url, 'DELETE', `/v1/default/banks/${b}/memories/${rawId}`);
  assert.equal(del.body.deleted_count, 3);
});

test('a correction supersedes the facts it corrects: they leave current answers and stay, marked, in the past', async () => {
  const b = bank();
  const first = await retain(b, { content: 'Bob lives in Berlin.', timestamp: '2024-01-01T00:00:00Z' });
  await settle(first.operation_id!);
  const second = await retain(b, { content: 'Correction: Bob lives in Munich.', timestamp: '2024-02-01T00:00:00Z' });
  const op = await settle(second.operation_id!);
  assert.equal(op.status, 'completed');
  const memories = await list(b, '&include_superseded=true');
  const old = memories.find((m) => m.text === 'Bob lives in Berlin.' && m.type !== 'raw')!;
  const fix = memories.find((m) => m.type === 'correction')!;
  assert.ok(old && fix, JSON.stringify(memories));
  assert.equal(old.superseded_by, fix.id);
  assert.equal(old.valid_to, '2024-02-01T00:00:00.000Z');
  assert.equal(fix.superseded_by, null);
  assert.ok(!(await list(b)).some((m) => m.id === old.id), 'the list answers current memories by default');
  const ask = (extra: Record<string, unknown>) =>
    call<{ results: Array<Memory & { scores: Record<string, number> }> }>(
      engine.url,
      'POST',
      `/v1/default/banks/${b}/memories/recall`,
      { query: 'Where does Bob live?', types: ['world', 'correction'], ...extra },
    );
  const current = (await ask({})).body.results.map((r) => r.id);
  assert.ok(current.includes(fix.id) && !current.includes(old.id), 'recall answers current facts by default');
  const asOf = (await ask({ as_of: '2024-01-15T00:00:00Z' })).body.results.map((r) => r.id);
  assert.ok(asOf.includes(old.id) && !asOf.includes(fix.id), 'as_of answers what was true then');
  // The fact's history shows its supersession, under the extraction's operation.
  const history = await call<{ items: Array<{ change: string; operation_id?: string }> }>(
    engine.url,
    'GET',
    `/v1/default/banks/${b}/memories/${old.id}/history`,
  );
  assert.deepEqual(
    history.body.items.map((v) => v.change),
    ['create', 'supersede'],
  );
  assert.equal(history.body.items[1]!.operation_id, second.operation_id);
  // With include_superseded, recall keeps the superseded fact but ranks it below the current one.
  const recall = await ask({ include_superseded: true });
  const order = recall.body.results.map((r) => r.id);
  assert.ok(
    order.includes(old.id) && order.indexOf(fix.id) < order.indexOf(old.id),
    JSON.stringify(recall.body.results),
  );
  assert.equal(recall.body.results.find((r) => r.id === old.id)!.scores['superseded'], 1);
  // The extraction prompt showed the model the existing fact it could supersede.
  const lastExtract = fake.calls.filter((c) => c.purpose === 'extract').at(-1)!;
  const shown = (lastExtract.input?.['existing_facts'] ?? []) as Array<{ id: string }>;
  assert.ok(shown.some((f) => f.id === old.id));
});

test('malformed and refused answers are retried; the operation then succeeds', async () => {
  const b = bank();
  fake.next({ kind: 'malformed' }, 'extract');
  fake.next({ kind: 'refuse' }, 'extract');
  const before = fake.count('extract');
  const out = await retain(b, { content: 'Carol prefers tea.' });
  const op = await settle(out.operation_id!);
  assert.equal(op.status, 'completed', JSON.stringify(op));
  assert.equal(op.facts_count, 1);
  assert.equal(fake.count('extract') - before, 3);
});

test('an answer that stays malformed fails the operation visibly; the raw memory stays and is recallable', async () => {
  const b = bank();
  fake.always = { purpose: 'extract', behaviour: { kind: 'wrong-shape' } };
  try {
    const out = await retain(b, { content: 'Dave collects vintage radios.' });
    const op = await settle(out.operation_id!);
    assert.equal(op.status, 'failed');
    assert.match(op.error_message ?? '', /did not match the expected shape/);
    assert.equal(op.errors.length, 1);
    assert.equal(op.errors[0]!.attempts, 1, 'malformed output is retried inside the call, not re-queued');
    assert.ok(op.usage.input_tokens > 0, 'tokens spent on failed attempts are recorded');
    const memories = await list(b);
    assert.deepEqual(
      memories.map((m) => m.type),
      ['raw'],
    );
    const recall = await call<{ results: Memory[] }>(engine.url, 'POST', `/v1/default/banks/${b}/memories/recall`, {
      query: 'radios',
    });
    assert.equal(recall.body.results[0]?.id, out.memory_ids[0]);
  } finally {
    fake.always = undefined;
  }
});

test('429 with Retry-After and 5xx are retried with backoff, then the facts land', async () => {
  const b = bank();
  fake.next({ kind: 'status', status: 429, retryAfter: '1' }, 'extract');
  fake.next({ kind: 'status', status: 503 }, 'extract');
  const started = Date.now();
  const out = await retain(b, { content: 'Erin runs a bakery in Porto.' });
  const op = await settle(out.operation_id!);
  assert.equal(op.status, 'completed', JSON.stringify(op));
  assert.equal(op.facts_count, 1);
  const calls = fake.calls.filter((c) => c.purpose === 'extract' && c.at >= started);
  assert.equal(calls.length, 3);
  assert.ok(calls[1]!.at - calls[0]!.at >= 900, 'Retry-After: 1 was honoured');
});

test('a provider that keeps failing or timing out fails the job after its retries, with the reason', async () => {
  const b = bank();
  fake.always = { purpose: 'extract', behaviour: { kind: 'hang', ms: 5000 } };
  try {
    const out = await retain(b, { content: 'Frank plays the cello.' });
    // Three job attempts, each three HTTP attempts of 1 s plus backoff: the operation fails visibly.
    const op = await settle(out.operation_id!, 60_000);
    assert.equal(op.status, 'failed');
    assert.match(op.error_message ?? '', /did not answer within 1000 ms/);
    assert.equal(op.errors[0]!.attempts, 3, 'transient failures are re-queued up to max attempts');
    assert.deepEqual(
      (await list(b)).map((m) => m.type),
      ['raw'],
    );
  } finally {
    fake.always = undefined;
  }
});

test('async: true returns at once with an operation id; the memories and their facts follow', async () => {
  const b = bank();
  const out = await retain(b, {
    items: [
      { content: 'Gina met Hugo in Oslo.', timestamp: '2023-05-05' },
      { content: 'Hugo thinks Oslo is expensive.' },
    ],
    async: true,
  });
  assert.equal(out.async, true);
  assert.ok(out.operation_id);
  assert.deepEqual(out.memory_ids, []);
  const op = await settle(out.operation_id);
  assert.equal(op.status, 'completed', JSON.stringify(op));
  assert.equal(op.memory_ids.length, 2);
  assert.equal(op.facts_count, 2);
  const memories = await list(b);
  assert.deepEqual(memories.map((m) => m.type).sort(), ['experience', 'opinion', 'raw', 'raw']);
  const met = memories.find((m) => m.type === 'experience')!;
  assert.equal(met.occurred_at, '2023-05-05T00:00:00.000Z');
  assert.ok(op.memory_ids.includes(met.source_id!));

  const unknown = await call(engine.url, 'GET', '/v1/default/operations/00000000-0000-4000-8000-000000000000');
  assert.equal(unknown.status, 404);
  assert.equal((unknown.body as { code: string }).code, 'operation_not_found');
  const bad = await call(engine.url, 'GET', '/v1/default/operations/not-a-uuid');
  assert.equal(bad.status, 400);
});

test('re-retaining identical content enqueues no second extraction', async () => {
  const b = bank();
  const first = await retain(b, { content: 'Ivan speaks Finnish.' });
  await settle(first.operation_id!);
  const again = await retain(b, { content: 'Ivan speaks Finnish.' });
  assert.equal(again.operation_id, undefined);
  assert.deepEqual(again.memory_ids, first.memory_ids);
  assert.equal((await list(b)).length, 2);
});

test('chat messages reach the extraction prompt with their speaker and role', async () => {
  const b = bank();
  const before = fake.calls.length;
  const out = await retain(b, {
    messages: [
      { role: 'user', name: 'Maya', content: 'I started learning the cello last month.' },
      { role: 'assistant', content: 'How are the lessons going?' },
    ],
    timestamp: '2024-05-02T18:00:00Z',
  });
  const op = await settle(out.operation_id!);
  assert.equal(op.status, 'completed', JSON.stringify(op));
  const inputs = fake.calls.slice(before).flatMap((c) => (c.purpose === 'extract' && c.input ? [c.input] : []));
  const byText = new Map(inputs.map((i) => [i['text'], i]));
  const maya = byText.get('Maya: I started learning the cello last month.');
  assert.ok(maya, JSON.stringify(inputs));
  assert.equal(maya['speaker'], 'Maya');
  assert.equal(maya['role'], 'user');
  const assistant = byText.get('assistant: How are the lessons going?');
  assert.ok(assistant, JSON.stringify(inputs));
  assert.equal(assistant['speaker'], 'assistant');
  assert.equal(assistant['role'], 'assistant');
});
