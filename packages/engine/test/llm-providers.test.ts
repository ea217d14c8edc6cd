// The provider code itself against the fake server: Gemini API and Vertex AI (Google's SDK) and OpenAI (the openai
// SDK), structured output, usage, refusals, Retry-After, the concurrency cap, and start-up validation of the settings.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { loadEngineConfig, ConfigError, type EngineConfig } from '../src/config/load.js';
import { createProvider, LlmClient } from '../src/llm/client.js';
import { EXTRACTION_SCHEMA, EXTRACTION_SYSTEM } from '../src/llm/extract.js';
import { LlmError } from '../src/llm/types.js';
import { startFakeLlm, type FakeLlm } from './helpers/fake-llm.js';

let fake: FakeLlm;
before(async () => {
  fake = await startFakeLlm();
});
after(async () => {
  await fake.stop();
});

function llmConfig(env: Record<string, string>): NonNullable<EngineConfig['llm']> {
  const config = loadEngineConfig({ MNEMOS_HOME: '/tmp/unused', ...env }).llm;
  assert.ok(config);
  return config;
}

const extractRequest = (text: string) => ({
  purpose: 'extract',
  system: EXTRACTION_SYSTEM,
  user: `Extract.\nINPUT:\n${JSON.stringify({ recorded_at: '2024-06-10T12:00:00Z', text, existing_facts: [] })}`,
  schema: EXTRACTION_SCHEMA as unknown as Record<string, unknown>,
  schemaName: 'facts',
  validate: (v: unknown) => {
    const facts = (v as { facts?: unknown }).facts;
    return Array.isArray(facts)
      ? { ok: true as const, value: facts as Array<{ text: string; type: string; occurred_at: string | null }> }
      : { ok: false as const, reason: 'no facts' };
  },
});

for (const provider of ['gemini', 'vertex'] as const) {
  test(`${provider}: structured extraction through Google's SDK, with usage`, async () => {
    const config = llmConfig({
      MNEMOS_API_LLM_PROVIDER: provider,
      MNEMOS_API_LLM_MODEL: 'gemini-fake',
      MNEMOS_API_LLM_API_KEY: 'k',
      MNEMOS_API_LLM_BASE_URL: fake.url,
      MNEMOS_API_LLM_MAX_RETRIES: '2',
    });
    const client = new LlmClient(createProvider(config), 2, new Registry());
    const before = fake.calls.length;
    const { value, usage } = await client.structured(extractRequest('Tom visited Rome yesterday.'));
    assert.deepEqual(
      value.map((f) => [f.type, f.occurred_at]),
      [['experience', '2024-06-09']],
    );
    assert.ok(usage.input_tokens > 0 && usage.output_tokens > 0);
    const sent = fake.calls.at(-1)!;
    assert.equal(fake.calls.length - before, 1);
    assert.equal(sent.format, 'gemini');
    assert.match(sent.path, /gemini-fake:generateContent/);
    if (provider === 'vertex') assert.match(sent.path, /publishers\/google\/models/);

    // A safety block is a refusal: asked again, then it succeeds.
    fake.next({ kind: 'refuse' }, 'extract');
    fake.next({ kind: 'status', status: 503 }, 'extract');
    const again = await client.structured(extractRequest('Uma likes jazz.'));
    assert.equal(again.value[0]!.type, 'preference');
  });
}

test('openai: 429 Retry-After as an HTTP date is honoured; a persistent 4xx is not retried', async () => {
  const config = llmConfig({
    MNEMOS_API_LLM_PROVIDER: 'openai',
    MNEMOS_API_LLM_MODEL: 'm',
    MNEMOS_API_LLM_API_KEY: 'k',
    MNEMOS_API_LLM_BASE_URL: fake.openaiBaseUrl,
    MNEMOS_API_LLM_MAX_RETRIES: '3',
  });
  const client = new LlmClient(createProvider(config), 2, new Registry());
  fake.next({ kind: 'status', status: 429, retryAfter: new Date(Date.now() + 2000).toUTCString() }, 'extract');
  const started = Date.now();
  await client.structured(extractRequest('Vera swims.'));
  assert.ok(Date.now() - started >= 900, 'waited for the Retry-After date');

  const before = fake.calls.length;
  fake.next({ kind: 'status', status: 400 }, 'extract');
  await assert.rejects(
    client.structured(extractRequest('Walt reads.')),
    (e: unknown) => e instanceof LlmError && e.kind === 'rejected' && !e.transient,
  );
  assert.equal(fake.calls.length - before, 1);
});

test('the concurrency cap holds: never more calls in flight than configured', async () => {
  const config = llmConfig({
    MNEMOS_API_LLM_PROVIDER: 'openai',
    MNEMOS_API_LLM_MODEL: 'm',
    MNEMOS_API_LLM_API_KEY: 'k',
    MNEMOS_API_LLM_BASE_URL: fake.openaiBaseUrl,
  });
  const client = new LlmClient(createProvider(config), 3, new Registry());
  fake.maxInFlight = 0;
  fake.delayMs = 100;
  try {
    await Promise.all(Array.from({ length: 10 }, (_, i) => client.structured(extractRequest(`Xia owns ${i} boats.`))));
  } finally {
    fake.delayMs = 0;
  }
  assert.equal(fake.maxInFlight, 3);
});

test('LLM settings are validated at start with one line', () => {
  const bad: Array<[Record<string, string>, RegExp]> = [
    [{ MNEMOS_API_LLM_PROVIDER: 'anthropic' }, /MNEMOS_API_LLM_PROVIDER must be one of/],
    [{ MNEMOS_API_LLM_PROVIDER: 'openai' }, /MNEMOS_API_LLM_MODEL is not set/],
    [{ MNEMOS_API_LLM_PROVIDER: 'openai', MNEMOS_API_LLM_MODEL: 'm' }, /MNEMOS_API_LLM_API_KEY is not set/],
    [{ MNEMOS_API_LLM_PROVIDER: 'litellm', MNEMOS_API_LLM_MODEL: 'm' }, /MNEMOS_API_LLM_BASE_URL is not set/],
    [{ MNEMOS_API_LLM_PROVIDER: 'vertex', MNEMOS_API_LLM_MODEL: 'm' }, /MNEMOS_API_LLM_VERTEX_PROJECT/],
    [
      {
        MNEMOS_API_LLM_PROVIDER: 'openai',
        MNEMOS_API_LLM_MODEL: 'm',
        MNEMOS_API_LLM_API_KEY: 'k',
        MNEMOS_API_LLM_BASE_URL: 'ftp://x',
      },
      /MNEMOS_API_LLM_BASE_URL must be an http/,
    ],
    [
      {
        MNEMOS_API_LLM_PROVIDER: 'openai',
        MNEMOS_API_LLM_MODEL: 'm',
        MNEMOS_API_LLM_API_KEY: 'k',
        MNEMOS_API_LLM_CONCURRENCY: '0',
      },
      /MNEMOS_API_LLM_CONCURRENCY must be between 1 and 256/,
    ],
    [
      {
        MNEMOS_API_LLM_PROVIDER: 'openai',
        MNEMOS_API_LLM_MODEL: 'm',
        MNEMOS_API_LLM_API_KEY: 'k',
        MNEMOS_API_LLM_TIMEOUT_MS: 'soon',
      },
      /MNEMOS_API_LLM_TIMEOUT_MS must be a number/,
    ],
  ];
  for (const [env, message] of bad) {
    assert.throws(
      () => loadEngineConfig({ MNEMOS_HOME: '/tmp/unused', ...env }),
      (e: unknown) => e instanceof ConfigError && message.test(e.message) && !e.message.includes('\n'),
      JSON.stringify(env),
    );
  }
  const vertex = llmConfig({
    MNEMOS_API_LLM_PROVIDER: 'vertex',
    MNEMOS_API_LLM_MODEL: 'm',
    MNEMOS_API_LLM_VERTEX_PROJECT: 'p',
  });
  assert.equal(vertex.vertexProject, 'p');
  assert.equal(loadEngineConfig({ MNEMOS_HOME: '/tmp/unused', MNEMOS_API_LLM_PROVIDER: 'none' }).llm, undefined);
});
