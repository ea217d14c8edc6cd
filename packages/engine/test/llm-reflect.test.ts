// Reflect through the real OpenAI provider code against the fake LLM server: answers only from recalled memories,
// citations limited to ids recalled from the bank, based_on, response_schema -> validated structured_output, usage,
// the Hindsight client's body shape, LLM failures as problems, and the bad-input suite for reflect.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';
import { startFakeLlm, type FakeLlm } from './helpers/fake-llm.js';
import { operationCompleted } from './helpers/operations.js';

let fake: FakeLlm;
let engine: TestEngine;
const BANK = 'reflect-bank';
let ids: string[] = [];

interface Reflect {
  text: string;
  citations: string[];
  based_on?: { memories: Array<{ id: string; text: string; type: string }> };
  structured_output?: Record<string, unknown>;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number };
}

before(async () => {
  fake = await startFakeLlm();
  engine = await startTestEngine({
    MNEMOS_API_LLM_PROVIDER: 'litellm',
    MNEMOS_API_LLM_MODEL: 'fake-model',
    MNEMOS_API_LLM_BASE_URL: fake.openaiBaseUrl,
    MNEMOS_API_LLM_TIMEOUT_MS: '1000',
    MNEMOS_API_LLM_MAX_RETRIES: '1',
  });
  // Facts are not needed here: answer extraction with nothing so the bank holds exactly the raw memories.
  fake.always = { purpose: 'extract', behaviour: { kind: 'content', content: { facts: [] } } };
  const r = await call<{ memory_ids: string[]; operation_id: string }>(
    engine.url,
    'POST',
    `/v1/default/banks/${BANK}/memories`,
    {
      items: [
        { content: 'Maria adopted a grey cat named Pixel.' },
        { content: 'Maria works as a structural engineer in Lyon.' },
        { content: 'The office coffee machine broke on Monday.' },
      ],
    },
  );
  assert.equal(r.status, 200);
  ids = r.body.memory_ids;
  // Extraction counts its tokens to the bank too: a usage test must not see them arrive while it measures.
  await operationCompleted(engine.url, r.body.operation_id);
  await call(engine.url, 'POST', '/v1/default/banks/other-bank/memories', { content: 'Maria secretly owns a parrot.' });
});

after(async () => {
  await engine?.dispose();
  await fake?.stop();
});

const reflect = (body: unknown, bank = BANK) =>
  call<Reflect>(engine.url, 'POST', `/v1/default/banks/${bank}/reflect`, body);

test('reflect answers from recalled memories and cites only ids recalled from this bank', async () => {
  // The model also "cites" an id from another bank and one that does not exist: neither may come back.
  const other = await call<{ items: Array<{ id: string }> }>(
    engine.url,
    'GET',
    '/v1/default/banks/other-bank/memories',
  );
  const foreign = other.body.items[0]!.id;
  fake.next(
    {
      kind: 'content',
      content: {
        answer: 'Maria has a cat called Pixel.',
        citations: [ids[0], foreign, '00000000-0000-4000-8000-000000000000', 'junk'],
      },
    },
    'reflect',
  );
  const r = await reflect({ query: 'What pet does Maria have?' });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.text, 'Maria has a cat called Pixel.');
  assert.deepEqual(r.body.citations, [ids[0]]);
  assert.equal(r.body.based_on, undefined);
  assert.ok(
    r.body.usage.input_tokens > 0 &&
      r.body.usage.total_tokens === r.body.usage.input_tokens + r.body.usage.output_tokens,
  );

  // What the model was given: this bank's memories only.
  const input = fake.calls.filter((c) => c.purpose === 'reflect').at(-1)!.input!;
  const given = (input['memories'] as Array<{ id: string }>).map((m) => m.id);
  assert.ok(given.includes(ids[0]!));
  assert.ok(!given.includes(foreign));
});

test('include.facts returns based_on with the cited memories; usage adds up in bank stats', async () => {
  const before = await call<{ usage: { total_tokens: number } }>(engine.url, 'GET', `/v1/default/banks/${BANK}/stats`);
  const r = await reflect({ query: 'Where does Maria work as an engineer?', include: { facts: {} } });
  assert.equal(r.status, 200);
  assert.ok(r.body.citations.includes(ids[1]!), JSON.stringify(r.body));
  for (const id of r.body.citations) assert.ok(ids.includes(id));
  assert.deepEqual(
    r.body.based_on!.memories.map((m) => m.id),
    r.body.citations,
  );
  assert.equal(r.body.based_on!.memories[0]!.type, 'raw');
  const after = await call<{ usage: { total_tokens: number } }>(engine.url, 'GET', `/v1/default/banks/${BANK}/stats`);
  assert.equal(after.body.usage.total_tokens - before.body.usage.total_tokens, r.body.usage.total_tokens);
});

test('says plainly when memory does not hold the answer', async () => {
  const r = await reflect({ query: 'What is the capital of Australia?' });
  assert.equal(r.status, 200);
  assert.match(r.body.text, /does not hold/);
  assert.deepEqual(r.body.citations, []);
  const empty = await reflect({ query: 'Anything about Maria?' }, 'no-such-bank');
  assert.equal(empty.status, 200);
  assert.deepEqual(empty.body.citations, []);
});

test('response_schema gives a validated structured_output; a non-conforming answer is retried', async () => {
  const schema = {
    type: 'object',
    properties: { pet: { type: 'string' }, count: { type: 'integer' } },
    required: ['pet', 'count'],
  };
  const r = await reflect({ query: 'What pet does Maria have?', response_schema: schema });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(typeof r.body.structured_output!['pet'], 'string');
  assert.equal(typeof r.body.structured_output!['count'], 'number');

  const calls = fake.count('reflect');
  fake.next({ kind: 'content', content: { answer: 'Pixel', citations: [], structured_output: { pet: 7 } } }, 'reflect');
  const retried = await reflect({ query: 'What pet does Maria have?', response_schema: schema });
  assert.equal(retried.status, 200);
  assert.equal(fake.count('reflect') - calls, 2);
  assert.equal(typeof retried.body.structured_output!['pet'], 'string');
});

test("the Hindsight client's reflect body shape works", async () => {
  const r = await reflect({
    query: 'What pet does Maria have?',
    context: 'asked by a friend',
    budget: 'low',
    tags: null,
    tags_match: null,
    tag_groups: null,
    response_schema: null,
    fact_types: null,
    exclude_mental_models: null,
    exclude_mental_model_ids: null,
    include: { facts: {} },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.ok(r.body.citations.includes(ids[0]!));
  const desc = await call<Reflect>(engine.url, 'POST', '/v1/reflect', {
    bank_id: BANK,
    query: 'What pet does Maria have?',
  });
  assert.equal(desc.status, 200);
  assert.ok(desc.body.citations.includes(ids[0]!));
});

test('LLM failures answer problems (never a 500) and change nothing', async () => {
  fake.always = { purpose: 'reflect', behaviour: { kind: 'malformed' } };
  try {
    const bad = await reflect({ query: 'What pet does Maria have?' });
    assert.equal(bad.status, 502);
    assert.equal((bad.body as unknown as { code: string }).code, 'llm_bad_answer');
    fake.always = { purpose: 'reflect', behaviour: { kind: 'status', status: 503 } };
    const down = await reflect({ query: 'What pet does Maria have?' });
    assert.equal(down.status, 503);
    assert.equal((down.body as unknown as { code: string }).code, 'llm_unavailable');
    assert.equal(down.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    fake.always = { purpose: 'reflect', behaviour: { kind: 'hang', ms: 3000 } };
    const slow = await reflect({ query: 'What pet does Maria have?' });
    assert.equal(slow.status, 504);
    assert.equal((slow.body as unknown as { code: string }).code, 'llm_timeout');
    fake.always = { purpose: 'reflect', behaviour: { kind: 'status', status: 401 } };
    const key = await reflect({ query: 'What pet does Maria have?' });
    assert.equal(key.status, 502);
    assert.equal((key.body as unknown as { code: string }).code, 'llm_rejected');
  } finally {
    fake.always = { purpose: 'extract', behaviour: { kind: 'content', content: { facts: [] } } };
  }
});

test('bad input to reflect answers 400 problem+json and never calls the LLM', async () => {
  const calls = fake.count('reflect');
  const cases: Array<[unknown, string]> = [
    [{}, '/query'],
    [{ query: '' }, '/query'],
    [{ query: '   ' }, '/query'],
    [{ query: 42 }, '/query'],
    [{ query: 'a\u0000b' }, '/query'],
    [{ query: 'q', budget: 'huge' }, '/budget'],
    [{ query: 'q', budget: 0 }, '/budget'],
    [{ query: 'q', include: 'facts' }, '/include'],
    [{ query: 'q', response_schema: 'not a schema' }, '/response_schema'],
    [{ query: 'q', response_schema: [1, 2] }, '/response_schema'],
    [{ query: 'q', response_schema: { type: 'no-such-type' } }, '/response_schema'],
    [{ query: 'q', response_schema: { type: 'object', properties: { a: { pattern: '([' } } } }, '/response_schema'],
    [{ query: 'q', fact_types: [] }, '/fact_types'],
    [{ query: 'q', fact_types: ['nonsense'] }, '/types'],
    [{ query: 'q', context: 5 }, '/context'],
    [{ query: 'q', tags_match: 'sometimes' }, '/tags_match'],
    [{ query: 'q', query_timestamp: 'yesterday' }, '/query_timestamp'],
    ['not json', ''],
    [[1, 2, 3], ''],
  ];
  for (const [body, pointer] of cases) {
    const r = await call<{ code: string; status: number; errors?: Array<{ pointer: string }> }>(
      engine.url,
      'POST',
      `/v1/default/banks/${BANK}/reflect`,
      body,
    );
    assert.equal(r.status, 400, `${JSON.stringify(body)} -> ${r.status} ${JSON.stringify(r.body)}`);
    assert.equal(r.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    if (pointer !== '')
      assert.ok(
        r.body.errors?.some((e) => e.pointer.startsWith(pointer)),
        `${JSON.stringify(body)}: ${JSON.stringify(r.body)}`,
      );
  }
  const badBank = await reflect({ query: 'q' }, 'bad%20bank');
  assert.equal(badBank.status, 400);
  assert.equal(fake.count('reflect'), calls);
});
