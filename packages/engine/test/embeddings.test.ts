import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MicroBatcher } from '../src/embeddings/batcher.js';
import type { Embedder } from '../src/embeddings/embedder.js';
import { cohereCall, createHostedEmbedder, geminiCall, openAiCompatibleCall } from '../src/embeddings/hosted.js';
import { createLocalEmbedder } from '../src/embeddings/local.js';
import { createThreadedLocalEmbedder } from '../src/embeddings/threaded.js';
import { call, startTestEngine, tempHome } from './helpers/engine.js';
import { MODEL_DIR } from './helpers/engine.js';
import { startFakeEmbeddingServer, type FakeEmbeddingServer } from './helpers/fake-embeddings.js';

let fake: FakeEmbeddingServer;
before(async () => {
  fake = await startFakeEmbeddingServer(16);
});
after(async () => {
  await fake?.close();
});

function cosine(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

describe('local ONNX embeddings', () => {
  it('embeds unit vectors where related sentences are closer than unrelated ones', async () => {
    const home = tempHome();
    const model = await createLocalEmbedder({
      model: MODEL_DIR,
      cacheDir: home.path,
      dtype: 'fp32',
      log: () => undefined,
    });
    try {
      assert.equal(model.dimension, 384);
      const [cat, kitten, tax] = await model.embed(
        ['The cat sleeps on the sofa.', 'A kitten naps on the couch.', 'Quarterly tax filing deadlines.'],
        'document',
      );
      assert.ok(Math.abs(cosine(cat!, cat!) - 1) < 1e-4);
      assert.ok(cosine(cat!, kitten!) > cosine(cat!, tax!) + 0.2);
    } finally {
      await model.close();
      home.remove();
    }
  });
});

describe('local model on its own thread (what the engine runs)', () => {
  it('gives the same vectors as the model on this thread, and this thread keeps running while it embeds', async () => {
    const home = tempHome();
    const options = { model: MODEL_DIR, cacheDir: home.path, dtype: 'fp32' as const, log: () => undefined };
    const [threaded, local] = await Promise.all([createThreadedLocalEmbedder(options), createLocalEmbedder(options)]);
    try {
      assert.equal(threaded.id, local.id);
      assert.equal(threaded.dimension, 384);
      const texts = Array.from(
        { length: 64 },
        (_, i) => `Memory number ${i} is about the garden, the harbour and the winter of ${1990 + i}.`,
      );
      // Timer ticks on this thread while the batch embeds elsewhere: the event loop is free.
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 1);
      const started = performance.now();
      const fromThread = await threaded.embed(texts, 'document');
      const elapsed = performance.now() - started;
      clearInterval(ticker);
      assert.ok(ticks >= Math.min(5, elapsed / 4), `only ${ticks} timer ticks in ${elapsed.toFixed(0)} ms`);
      const here = await local.embed(texts, 'document');
      assert.equal(fromThread.length, texts.length);
      for (let i = 0; i < texts.length; i++) assert.ok(cosine(fromThread[i]!, here[i]!) > 0.99999);
      assert.deepEqual(await threaded.embed([], 'query'), []);
    } finally {
      await Promise.all([threaded.close(), local.close()]);
      home.remove();
    }
  });

  it('passes a loading failure back with its message', async () => {
    const home = tempHome();
    try {
      await assert.rejects(
        createThreadedLocalEmbedder({ model: home.path, cacheDir: home.path, dtype: 'fp32', log: () => undefined }),
        (e: unknown) => e instanceof Error && e.message.length > 0 && !/exit code/.test(e.message),
      );
    } finally {
      home.remove();
    }
  });
});

describe('micro-batcher', () => {
  // Every text one token long, so a cap of n tokens is a cap of n texts; grouping by length is tested in
  // embedding-batches.test.ts.
  const oneToken = () => 1;

  it('lets concurrent requests share inference batches and keeps answers in order', async () => {
    const batches: string[][] = [];
    const inner: Embedder = {
      id: 'test',
      dimension: 1,
      async embed(texts) {
        batches.push([...texts]);
        await new Promise((r) => setTimeout(r, 20));
        return texts.map((t) => Float32Array.of(t.length));
      },
      async close() {},
    };
    const batcher = new MicroBatcher(inner, { query: 8, document: 8 }, undefined, 1, oneToken);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => batcher.embed(['x'.repeat(i + 1)], 'document')),
    );
    assert.deepEqual(
      answers.map((a) => a[0]![0]),
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    // The first text goes alone (the model was idle); the other 19 queue behind it and share batches of <= 8.
    assert.equal(batches[0]!.length, 1);
    assert.ok(batches.length <= 4, `expected shared batches, got ${batches.length}`);
    assert.ok(batches.every((b) => b.length <= 8));
  });

  it('keeps up to maxInFlight batches at the model, so the next starts without waiting for the caller', async () => {
    let running = 0;
    let most = 0;
    const sizes: number[] = [];
    const inner: Embedder = {
      id: 'test',
      dimension: 1,
      async embed(texts) {
        running++;
        most = Math.max(most, running);
        sizes.push(texts.length);
        await new Promise((r) => setTimeout(r, 20));
        running--;
        return texts.map((t) => Float32Array.of(t.length));
      },
      async close() {},
    };
    // No hold: the second slot takes whatever waits at once (embedding-batches.test.ts covers the hold).
    const noHold = { ms: 0, schedule: () => () => undefined };
    const batcher = new MicroBatcher(inner, { query: 8, document: 8 }, undefined, 2, oneToken, noHold);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => batcher.embed(['x'.repeat(i + 1)], 'query')),
    );
    assert.deepEqual(
      answers.map((a) => a[0]![0]),
      Array.from({ length: 12 }, (_, i) => i + 1),
    );
    assert.equal(most, 2, 'two batches overlap, never three');
    // The first two texts go at once, each alone; the other ten queue and share the batches that follow.
    assert.deepEqual(sizes.slice(0, 2), [1, 1]);
    assert.ok(sizes.length <= 4, `expected shared batches, got ${sizes.join(', ')}`);
  });

  it('serves queries before queued documents and passes failures to every waiter', async () => {
    const order: string[] = [];
    let fail = false;
    const inner: Embedder = {
      id: 'test',
      dimension: 1,
      async embed(texts, kind) {
        order.push(kind);
        await new Promise((r) => setTimeout(r, 10));
        if (fail) throw new Error('model crashed');
        return texts.map(() => Float32Array.of(0));
      },
      async close() {},
    };
    const batcher = new MicroBatcher(inner, { query: 4, document: 4 }, undefined, 1, oneToken);
    await Promise.all([
      batcher.embed(['d1'], 'document'),
      batcher.embed(['d2', 'd3'], 'document'),
      batcher.embed(['q'], 'query'),
    ]);
    assert.deepEqual(order, ['document', 'query', 'document']);
    fail = true;
    const results = await Promise.allSettled([batcher.embed(['a'], 'document'), batcher.embed(['b'], 'document')]);
    assert.ok(results.every((r) => r.status === 'rejected'));
  });
});

describe('hosted embedding families against local servers speaking their wire formats', () => {
  it('OpenAI-compatible / LiteLLM: sends model and input with the bearer key, learns the dimension', async () => {
    const e = await createHostedEmbedder(
      'litellm:m',
      openAiCompatibleCall({
        model: 'text-embedding-3-small',
        apiKey: 'sk-test',
        apiBase: `${fake.url}/v1`,
        dimension: undefined,
      }),
    );
    assert.equal(e.dimension, 16);
    const [v] = await e.embed(['hello world'], 'document');
    assert.ok(Math.abs(cosine(v!, v!) - 1) < 1e-5);
    const last = fake.requests.at(-1)!;
    assert.equal(last.path, '/v1/embeddings');
    assert.equal(last.headers.authorization, 'Bearer sk-test');
    assert.equal(last.body.model, 'text-embedding-3-small');
  });

  it('Gemini: batchEmbedContents with the task type for queries and documents', async () => {
    const e = await createHostedEmbedder(
      'gemini:m',
      geminiCall({ model: 'text-embedding-004', apiKey: 'g-key', apiBase: fake.url, dimension: undefined }),
    );
    await e.embed(['what is up'], 'query');
    const last = fake.requests.at(-1)!;
    assert.equal(last.path, '/v1beta/models/text-embedding-004:batchEmbedContents');
    assert.equal(last.headers['x-goog-api-key'], 'g-key');
    assert.equal((last.body.requests as Array<{ taskType: string }>)[0]!.taskType, 'RETRIEVAL_QUERY');
  });

  it('Cohere: v2/embed with input_type', async () => {
    const e = await createHostedEmbedder(
      'cohere:m',
      cohereCall({ model: 'embed-english-v3.0', apiKey: 'co-key', apiBase: fake.url, dimension: undefined }),
    );
    await e.embed(['a document'], 'document');
    const last = fake.requests.at(-1)!;
    assert.equal(last.path, '/v2/embed');
    assert.equal(last.body.input_type, 'search_document');
    assert.equal(last.headers.authorization, 'Bearer co-key');
  });

  it('retries rate limits and server errors, then succeeds', async () => {
    const e = await createHostedEmbedder(
      'litellm:m',
      openAiCompatibleCall({ model: 'm', apiKey: undefined, apiBase: fake.url, dimension: undefined }),
    );
    fake.failNext(2, 429);
    const [v] = await e.embed(['after a rate limit'], 'document');
    assert.equal(v!.length, 16);
  });

  it('an engine runs on the LiteLLM family end to end', async () => {
    const engine = await startTestEngine({
      MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: '',
      MNEMOS_API_EMBEDDINGS_LITELLM_MODEL: 'proxy-model',
      MNEMOS_API_EMBEDDINGS_LITELLM_API_BASE: fake.url,
    });
    try {
      await call(engine.url, 'POST', '/v1/default/banks/h/memories', {
        items: [{ content: 'zebra stripes pattern' }, { content: 'tax return forms' }],
      });
      const r = await call<{ results: Array<{ text: string }> }>(
        engine.url,
        'POST',
        '/v1/default/banks/h/memories/recall',
        { query: 'zebra stripes' },
      );
      assert.equal(r.body.results[0]?.text, 'zebra stripes pattern');
      const v = await call<{ features: { embedding_model: string; embedding_dimension: number } }>(
        engine.url,
        'GET',
        '/version',
      );
      assert.equal(v.body.features.embedding_model, 'litellm:proxy-model');
      assert.equal(v.body.features.embedding_dimension, 16);
    } finally {
      await engine.dispose();
    }
  });
});
