// Streamed LLM calls through the provider code (the openai SDK; Google's SDK for the Gemini API and Vertex AI)
// against the stand-in streaming in each wire format: the text arrives in pieces, the whole answer is parsed and
// counted as the unary call's is; failures before the answer starts are retried; a provider that goes silent
// mid-answer times out; a cut stream fails; aborting closes the provider connection.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { loadEngineConfig } from '../src/config/load.js';
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

const PROVIDERS = {
  openai: () => ({ MNEMOS_API_LLM_PROVIDER: 'openai', MNEMOS_API_LLM_BASE_URL: fake.openaiBaseUrl }),
  gemini: () => ({ MNEMOS_API_LLM_PROVIDER: 'gemini', MNEMOS_API_LLM_BASE_URL: fake.url }),
  vertex: () => ({ MNEMOS_API_LLM_PROVIDER: 'vertex', MNEMOS_API_LLM_BASE_URL: fake.url }),
} as const;

function client(provider: keyof typeof PROVIDERS, env: Record<string, string> = {}): LlmClient {
  const config = loadEngineConfig({
    MNEMOS_HOME: '/tmp/unused',
    MNEMOS_API_LLM_MODEL: 'fake-model',
    MNEMOS_API_LLM_API_KEY: 'k',
    MNEMOS_API_LLM_MAX_RETRIES: '2',
    ...PROVIDERS[provider](),
    ...env,
  }).llm;
  assert.ok(config);
  return new LlmClient(createProvider(config), 2, new Registry());
}

type Facts = Array<{ text: string; type: string }>;
const extractRequest = (text: string, signal?: AbortSignal) => ({
  purpose: 'extract',
  system: EXTRACTION_SYSTEM,
  user: `Extract.\nINPUT:\n${JSON.stringify({ recorded_at: '2024-06-10T12:00:00Z', text, existing_facts: [] })}`,
  schema: EXTRACTION_SCHEMA as unknown as Record<string, unknown>,
  schemaName: 'facts',
  signal,
  validate: (v: unknown) => {
    const facts = (v as { facts?: unknown }).facts;
    return Array.isArray(facts) ? { ok: true as const, value: facts as Facts } : { ok: false as const, reason: 'no' };
  },
});
const TEXT = 'Tom visited Rome yesterday. Uma likes jazz. Ivan works as a carpenter in Lyon.';

for (const provider of Object.keys(PROVIDERS) as Array<keyof typeof PROVIDERS>) {
  test(`${provider}: the answer streams in pieces and is parsed and counted as the unary answer is`, async () => {
    const llm = client(provider);
    const unary = await llm.structured(extractRequest(TEXT));
    const pieces: string[] = [];
    const streamed = await llm.streamed({ ...extractRequest(TEXT), onText: (t) => pieces.push(t) });
    assert.ok(pieces.length >= 3, `several pieces (got ${pieces.length})`);
    assert.deepEqual(JSON.parse(pieces.join('')), { facts: unary.value });
    assert.deepEqual(streamed.value, unary.value);
    assert.ok(streamed.usage.input_tokens > 0 && streamed.usage.output_tokens > 0);
    assert.deepEqual(streamed.usage, unary.usage);
    const sent = fake.calls.at(-1)!;
    assert.equal(sent.streamed, true);
    if (provider !== 'openai') assert.match(sent.path, /fake-model:streamGenerateContent\?alt=sse$/);
  });
}

test('a failure before the answer starts is retried; a stream cut mid-answer is not', async () => {
  const llm = client('openai');
  const before = fake.calls.length;
  fake.next({ kind: 'status', status: 503, retryAfter: '0' });
  const ok = await llm.streamed({ ...extractRequest(TEXT), onText: () => undefined });
  assert.equal(ok.value.length, 3);
  assert.equal(fake.calls.length - before, 2);

  fake.next({ kind: 'cut-stream', afterChunks: 2 });
  const pieces: string[] = [];
  const cut = await llm.streamed({ ...extractRequest(TEXT), onText: (t) => pieces.push(t) }).then(
    () => assert.fail('a cut stream must fail'),
    (error: unknown) => error,
  );
  assert.ok(cut instanceof LlmError, String(cut));
  assert.equal(cut.kind, 'unavailable');
  assert.ok(pieces.length >= 1 && pieces.length <= 2, `the pieces before the cut (got ${pieces.length})`);
  assert.equal(fake.calls.length - before, 3, 'not replayed');
});

test('a provider that goes silent mid-answer times out, though the whole answer may take longer', async () => {
  const llm = client('gemini', { MNEMOS_API_LLM_TIMEOUT_MS: '2000', MNEMOS_API_LLM_MAX_RETRIES: '0' });
  // Pieces 250 ms apart make the whole answer take longer than the timeout; each silence stays well under it.
  fake.streamGapMs = 250;
  fake.streamChunkChars = 40;
  try {
    const started = performance.now();
    const slow = await llm.streamed({ ...extractRequest(TEXT), onText: () => undefined });
    assert.equal(slow.value.length, 3);
    assert.ok(performance.now() - started > 2000, 'the whole answer took longer than the timeout');
  } finally {
    fake.streamGapMs = 5;
    fake.streamChunkChars = 24;
  }
  fake.next({ kind: 'stall-stream', afterChunks: 1 });
  const error = await llm.streamed({ ...extractRequest(TEXT), onText: () => undefined }).then(
    () => assert.fail('a silent provider must time out'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof LlmError, String(error));
  assert.equal(error.kind, 'timeout');
});

test('aborting a streamed call closes the provider connection', async () => {
  const llm = client('openai');
  const abandoned = fake.streamsAbandoned;
  fake.next({ kind: 'stall-stream', afterChunks: 1 });
  const controller = new AbortController();
  const error = await llm
    .streamed({ ...extractRequest(TEXT, controller.signal), onText: () => controller.abort() })
    .then(
      () => assert.fail('an aborted call must fail'),
      (e: unknown) => e,
    );
  assert.ok(error instanceof LlmError, String(error));
  assert.equal(error.kind, 'aborted');
  const deadline = Date.now() + 30_000;
  while (fake.streamsAbandoned === abandoned && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.equal(fake.streamsAbandoned, abandoned + 1);
});
