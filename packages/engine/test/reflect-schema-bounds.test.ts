// test-runner: alone (it times how fast the server answers; other test files' CPU would blur that)
// A caller's response_schema cannot make reflect hold the event loop: patterns run on a linear-time engine (RE2),
// patterns it cannot run are refused with a 400 naming where, and the schema's depth and the answer's size are capped.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';
import { startFakeLlm, type FakeLlm } from './helpers/fake-llm.js';
import { assertLive, idleFloorMs, probeDuring } from './helpers/liveness.js';

let fake: FakeLlm;
let engine: TestEngine;
let floorMs = 0;
const BANK = 'schema-bank';

before(async () => {
  fake = await startFakeLlm();
  engine = await startTestEngine({
    MNEMOS_API_LLM_PROVIDER: 'litellm',
    MNEMOS_API_LLM_MODEL: 'fake-model',
    MNEMOS_API_LLM_BASE_URL: fake.openaiBaseUrl,
    MNEMOS_API_LLM_TIMEOUT_MS: '5000',
    MNEMOS_API_LLM_MAX_RETRIES: '1',
  });
  fake.always = { purpose: 'extract', behaviour: { kind: 'content', content: { facts: [] } } };
  const r = await call(engine.url, 'POST', `/v1/default/banks/${BANK}/memories`, {
    content: 'Maria adopted a grey cat named Pixel.',
  });
  assert.equal(r.status, 200);
  floorMs = await idleFloorMs(engine.url);
});

after(async () => {
  await engine?.dispose();
  await fake?.stop();
});

interface Problem {
  code: string;
  detail: string;
  errors?: Array<{ pointer: string; detail: string }>;
}

const reflect = <T = Record<string, unknown>>(body: unknown) =>
  call<T>(engine.url, 'POST', `/v1/default/banks/${BANK}/reflect`, body);

test('a backtracking pattern checked against a long pathological answer finishes promptly, the engine stays live', async () => {
  const schema = {
    type: 'object',
    properties: { name: { type: 'string', pattern: '^(\\w+\\s?)*$' } },
    required: ['name'],
  };
  const pathological = `${'a'.repeat(5000)}!`;
  fake.always = {
    purpose: 'reflect',
    behaviour: {
      kind: 'content',
      content: { answer: 'Pixel', citations: [], structured_output: { name: pathological } },
    },
  };
  try {
    const probe = await probeDuring(
      engine.url,
      reflect<Problem>({ query: 'What is the cat called?', response_schema: schema }),
    );
    assert.equal(probe.result.status, 502, JSON.stringify(probe.result.body));
    assert.equal(probe.result.body.code, 'llm_bad_answer');
    assert.match(probe.result.body.detail, /does not match response_schema/);
    assertLive(probe, floorMs);
  } finally {
    fake.always = { purpose: 'extract', behaviour: { kind: 'content', content: { facts: [] } } };
  }
});

test('a pattern runs with its meaning on the linear engine', async () => {
  const schema = {
    type: 'object',
    properties: { name: { type: 'string', pattern: '^(\\w+\\s?)*$' } },
    required: ['name'],
  };
  fake.next(
    { kind: 'content', content: { answer: 'Pixel', citations: [], structured_output: { name: 'Pixel the cat' } } },
    'reflect',
  );
  const r = await reflect<{ structured_output: { name: string } }>({
    query: 'What is the cat called?',
    response_schema: schema,
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.structured_output.name, 'Pixel the cat');
});

test('patterns the linear engine cannot run are refused at request time, naming where', async () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [
      { type: 'object', properties: { x: { type: 'string', pattern: '^(a)\\1$' } } },
      '/response_schema/properties/x/pattern',
    ],
    [
      { type: 'object', properties: { x: { type: 'string', pattern: '^(?=a)a$' } } },
      '/response_schema/properties/x/pattern',
    ],
    [
      { type: 'object', patternProperties: { '^(?<!b)a$': { type: 'string' } } },
      '/response_schema/patternProperties/^(?<!b)a$',
    ],
  ];
  const calls = fake.count('reflect');
  for (const [schema, pointer] of cases) {
    const r = await reflect<Problem>({ query: 'What is the cat called?', response_schema: schema });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.headers.get('content-type')?.startsWith('application/problem+json'), true);
    assert.equal(r.body.code, 'validation_failed');
    assert.equal(r.body.errors?.[0]?.pointer, pointer);
    assert.match(r.body.detail, /linear-time engine \(RE2\)/);
  }
  assert.equal(fake.count('reflect'), calls, 'no LLM call for a refused schema');
});

test('a schema nested too deep is refused; a pattern inside const or enum is data, not a pattern', async () => {
  let deep: Record<string, unknown> = { type: 'string' };
  // 41 levels: deeper than a schema may nest, yet within the body's own depth limit (64), so the schema check answers.
  for (let i = 0; i < 20; i++) deep = { type: 'object', properties: { x: deep } };
  const r = await reflect<Problem>({ query: 'What is the cat called?', response_schema: deep });
  assert.equal(r.status, 400);
  assert.match(r.body.detail, /nests deeper than 32 levels/);

  const data = { type: 'object', properties: { x: { const: { pattern: '(a)\\1' } } } };
  fake.next(
    { kind: 'content', content: { answer: 'Pixel', citations: [], structured_output: { x: { pattern: '(a)\\1' } } } },
    'reflect',
  );
  const ok = await reflect({ query: 'What is the cat called?', response_schema: data });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
});

test('an answer larger than the cap is not validated and is retried as a bad answer', async () => {
  const schema = { type: 'object', properties: { notes: { type: 'array', items: { type: 'string' } } } };
  const big = Array.from({ length: 20_000 }, (_, i) => `note ${i}`);
  fake.always = {
    purpose: 'reflect',
    behaviour: { kind: 'content', content: { answer: 'Pixel', citations: [], structured_output: { notes: big } } },
  };
  try {
    const r = await reflect<Problem>({ query: 'What is the cat called?', response_schema: schema });
    assert.equal(r.status, 502, JSON.stringify(r.body).slice(0, 300));
    assert.match(r.body.detail, /characters of JSON, more than the 65536 allowed/);
  } finally {
    fake.always = { purpose: 'extract', behaviour: { kind: 'content', content: { facts: [] } } };
  }
});
