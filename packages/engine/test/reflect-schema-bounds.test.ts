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

/** Sends `schema` and asserts the 400 that names `pointer` (and says `detail`), with no LLM call made. */
async function assertRefused(schema: unknown, pointer: string, detail: RegExp): Promise<void> {
  const calls = fake.count('reflect');
  const r = await reflect<Problem>({ query: 'What is the cat called?', response_schema: schema });
  const what = JSON.stringify(schema).slice(0, 120);
  assert.equal(r.status, 400, `${what}: ${JSON.stringify(r.body).slice(0, 300)}`);
  assert.equal(r.headers.get('content-type')?.startsWith('application/problem+json'), true, what);
  assert.equal(r.body.code, 'validation_failed', what);
  assert.equal(r.body.errors?.[0]?.pointer, pointer, what);
  assert.match(r.body.detail, detail, what);
  assert.doesNotMatch(r.body.detail, /\n|at .*\.ts:\d+/, `${what}: one line, no stack`);
  assert.equal(fake.count('reflect'), calls, `${what}: no LLM call for a refused schema`);
}

test('references that loop without descending, leave the schema or name nothing are refused, naming the reference', async () => {
  const loop = /leads back to \/response_schema[^ ]* without descending into a property or an item/;
  const cases: Array<[unknown, string, RegExp]> = [
    [{ $ref: '#' }, '/response_schema/$ref', loop],
    [{ allOf: [{ $ref: '#' }] }, '/response_schema/allOf/0/$ref', loop],
    [{ type: 'object', not: { $ref: '#' } }, '/response_schema/not/$ref', loop],
    [
      { $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } }, $ref: '#/$defs/a' },
      '/response_schema/$defs/a/$ref',
      loop,
    ],
    [
      {
        definitions: { a: { anyOf: [{ $ref: '#/definitions/b' }] }, b: { if: { $ref: '#/definitions/a' } } },
        properties: { x: { $ref: '#/definitions/a' } },
      },
      '/response_schema/definitions/a/anyOf/0/$ref',
      loop,
    ],
    [
      { $ref: 'http://127.0.0.1:9/schema.json' },
      '/response_schema/$ref',
      /outside response_schema.*nothing is fetched/,
    ],
    [
      { type: 'object', properties: { a: { $ref: 'https://example.com/s#/$defs/a' } } },
      '/response_schema/properties/a/$ref',
      /outside response_schema/,
    ],
    [{ $id: 'https://example.com/s', $ref: 'https://example.com/s' }, '/response_schema/$id', /may not declare \$id/],
    [{ $ref: '#/$defs/missing' }, '/response_schema/$ref', /names nothing in response_schema/],
    [{ $anchor: 'a', $ref: '#a' }, '/response_schema/$ref', /anchors are not followed/],
  ];
  for (const [schema, pointer, detail] of cases) await assertRefused(schema, pointer, detail);
});

test('schemas whose check would cost too much are refused before the LLM is asked', async () => {
  const doubling: Record<string, unknown> = { a0: { type: 'number' } };
  for (let i = 1; i <= 24; i++)
    doubling[`a${i}`] = { allOf: [{ $ref: `#/$defs/a${i - 1}` }, { $ref: `#/$defs/a${i - 1}` }] };
  const manyProperties = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`p${i}`, { type: 'string' }]));
  const cost = /could take about [\d,]+ steps to check one answer, more than the 12,000,000 allowed/;
  const cases: Array<[unknown, string, RegExp]> = [
    [{ type: 'object', properties: manyProperties }, '/response_schema', /has more than 200 subschemas/],
    [{ $defs: doubling, $ref: '#/$defs/a24' }, '/response_schema', cost],
    [{ type: 'array', items: { enum: Array.from({ length: 5000 }, (_, i) => ({ a: i })) } }, '/response_schema', cost],
    [
      { type: 'object', properties: { x: { type: 'string', pattern: '(?:[a-z]+\\s?){1,40}$' } } },
      '/response_schema',
      /applies patterns \(or formats\) of \d+ RE2 instructions in all to one value/,
    ],
    [
      { type: 'object', properties: { x: { type: 'string', pattern: 'a'.repeat(1001) } } },
      '/response_schema/properties/x/pattern',
      /longer than 1,000 characters/,
    ],
  ];
  for (const [schema, pointer, detail] of cases) await assertRefused(schema, pointer, detail);
});

test('a recursive schema that descends into its value is checked against the answer', async () => {
  const tree = {
    type: 'object',
    properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } },
    required: ['name'],
  };
  fake.next(
    {
      kind: 'content',
      content: {
        answer: 'Pixel',
        citations: [],
        structured_output: { name: 'Maria', children: [{ name: 'Pixel', children: [] }] },
      },
    },
    'reflect',
  );
  const ok = await reflect<{ structured_output: { children: Array<{ name: string }> } }>({
    query: 'Who has a cat?',
    response_schema: tree,
  });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.structured_output.children[0]?.name, 'Pixel');
});

test('an answer nesting deeper than 32 levels is a bad answer (502), not a server error', async () => {
  const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
  fake.always = {
    purpose: 'reflect',
    behaviour: { kind: 'content', content: `{"answer":"Pixel","citations":[],"structured_output":${deep}}` },
  };
  try {
    const r = await reflect<Problem>({ query: 'What is the cat called?', response_schema: { type: 'array' } });
    assert.equal(r.status, 502, JSON.stringify(r.body).slice(0, 300));
    assert.equal(r.body.code, 'llm_bad_answer');
    assert.match(r.body.detail, /nests deeper than 32 levels/);
  } finally {
    fake.always = { purpose: 'extract', behaviour: { kind: 'content', content: { facts: [] } } };
  }
});

test('uniqueItems over thousands of object items is checked in linear time, the engine stays live', async () => {
  const schema = { type: 'object', properties: { notes: { type: 'array', uniqueItems: true } } };
  // Just under the answer cap: a pairwise check compares 18 million pairs of objects.
  const notes = Array.from({ length: 6_000 }, (_, i) => ({ a: i }));
  fake.next({ kind: 'content', content: { answer: 'Pixel', citations: [], structured_output: { notes } } }, 'reflect');
  // The answer comes after a pause, so the probes run before, during and after its check.
  fake.delayMs = 100;
  const probe = await probeDuring(
    engine.url,
    reflect<{ structured_output: { notes: unknown[] } }>({ query: 'What is the cat called?', response_schema: schema }),
  ).finally(() => {
    fake.delayMs = 0;
  });
  assert.equal(probe.result.status, 200, JSON.stringify(probe.result.body).slice(0, 300));
  assert.equal(probe.result.body.structured_output.notes.length, 6_000);
  assertLive(probe, floorMs);
});
