import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadEngineConfig } from '../src/index.js';
import { unknownVariableWarnings } from '../src/config/unknown-variables.js';
import { Readiness } from '../src/startup/readiness.js';
import { waitUntilReady } from '../src/process.js';
import { call, tempHome, testEnv } from './helpers/engine.js';
import { fakeVector } from './helpers/fake-embeddings.js';
import { runCliToEnd, spawnEngine, type EngineProcess } from './helpers/process.js';

/**
 * An OpenAI-compatible embedding provider that answers nothing until `release()`: the engine stays in its
 * "loading model" stage (it embeds a probe at start) for as long as the test needs, without racing a clock.
 */
interface HeldProvider {
  url: string;
  requests: () => number;
  release(): void;
  close(): Promise<void>;
}

async function heldEmbeddingProvider(): Promise<HeldProvider> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let requests = 0;
  const server: Server = createHttpServer((req, res) => {
    requests++;
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      void released.then(() => {
        const input = (JSON.parse(raw) as { input: string[] }).input;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ data: input.map((t, index) => ({ index, embedding: fakeVector(t, 8) })) }));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    url,
    requests: () => requests,
    release,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function heldEnv(home: string, providerUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return testEnv(home, {
    MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: '',
    MNEMOS_API_EMBEDDINGS_LITELLM_MODEL: 'held',
    MNEMOS_API_EMBEDDINGS_LITELLM_API_BASE: providerUrl,
    ...extra,
  });
}

describe('start-up: the port first, then the slow parts', { timeout: 240_000 }, () => {
  it('answers liveness at once, /health "warming" with its stage, data routes 503 with Retry-After', async () => {
    const home = tempHome();
    const provider = await heldEmbeddingProvider();
    let engine: EngineProcess | undefined;
    try {
      const env = heldEnv(home.path, provider.url, { MNEMOS_API_LOG_LEVEL: 'info' });
      engine = await spawnEngine(env, 90_000, { ready: false });
      const live = await call(engine.url, 'GET', '/health/live');
      assert.equal(live.status, 200);
      assert.equal(live.body.status, 'alive');

      // The engine waits for the held provider's first answer; poll until it has asked (the database opens first).
      while (provider.requests() === 0) await new Promise((resolve) => setTimeout(resolve, 100));
      const health = await call(engine.url, 'GET', '/health');
      assert.equal(health.status, 503);
      assert.match(health.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.equal(health.body.status, 503, 'the problem document carries the HTTP status, as RFC 9457 says');
      assert.equal(health.body.code, 'warming');
      assert.equal(health.body.stage, 'loading model');

      const retain = await call(engine.url, 'POST', '/v1/default/banks/warm/memories', { content: 'Too early.' });
      assert.equal(retain.status, 503);
      assert.equal(retain.body.code, 'warming');
      assert.equal(retain.body.status, 503);
      assert.match(String(retain.body.detail), /loading model/);
      assert.equal(retain.headers.get('retry-after'), '5');
      const recall = await call(engine.url, 'POST', '/v1/default/banks/warm/memories/recall', { query: 'early' });
      assert.equal(recall.status, 503);

      provider.release();
      await waitUntilReady(engine.url, 60_000);
      const ready = await call(engine.url, 'GET', '/health');
      assert.equal(ready.body.status, 'healthy');
      const stored = await call(engine.url, 'POST', '/v1/default/banks/warm/memories', { content: 'Now it is ready.' });
      assert.equal(stored.status, 200);
      assert.equal(await engine.stop('SIGINT'), 0);
      assert.match(engine.output(), /SIGINT received; stopping/);
      // One info line per start stage with its duration.
      assert.match(engine.output(), /start stage \\"opening database\\" done in \d+ ms/);
      assert.match(engine.output(), /start stage \\"loading model\\" done in \d+ ms/);
    } finally {
      await engine?.stop('SIGKILL');
      await provider.close();
      home.remove();
    }
  });

  it('a taken port fails at once in one line naming it and MNEMOS_API_PORT, before database or model', async () => {
    const home = tempHome('mnemos-test-', { database: 'none' });
    const provider = await heldEmbeddingProvider();
    const taken = createTcpServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const address = taken.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const env = heldEnv(home.path, provider.url, {
        MNEMOS_API_PORT: String(port),
        MNEMOS_API_LOG_LEVEL: 'info',
        MNEMOS_API_EMBEDDING_LOCAL_MODEL: '/typo/of/the/model/setting',
      });
      const r = await runCliToEnd(['serve'], env);
      assert.equal(r.code, 78, r.stderr);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`^mnemos: port ${port} on 127\\.0\\.0\\.1 is already in use.*MNEMOS_API_PORT`));
      assert.equal(provider.requests(), 0, 'no model work');
      assert.equal(existsSync(join(home.path, 'db')), false, 'no database work');
      // The mistyped setting is named with the closest valid one.
      assert.match(r.stdout, /MNEMOS_API_EMBEDDING_LOCAL_MODEL is not a Mnemos setting/);
      assert.match(r.stdout, /did you mean MNEMOS_API_EMBEDDINGS_LOCAL_MODEL\?/);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack');

      // The stack only at debug.
      const debug = await runCliToEnd(['serve'], { ...env, MNEMOS_API_LOG_LEVEL: 'debug' });
      assert.equal(debug.code, 78);
      assert.match(debug.stderr, /\n\s+at /);
    } finally {
      taken.close();
      await provider.close();
      home.remove();
    }
  });

  it('warns about unknown MNEMOS_* variables only, with the closest valid name when it is a likely typo', () => {
    const warnings = unknownVariableWarnings({
      MNEMOS_API_PORT: '1',
      MNEMOS_URL: 'x',
      MNEMOS_TEST_PG_URL: 'x',
      PATH: '/bin',
      MNEMOS_API_LLM_MODLE: 'x',
      MNEMOS_SOMETHING_ELSE_ENTIRELY: 'x',
    });
    assert.deepEqual(warnings, [
      'MNEMOS_API_LLM_MODLE is not a Mnemos setting and is ignored; did you mean MNEMOS_API_LLM_MODEL? ' +
        '(the settings are listed in the README).',
      'MNEMOS_SOMETHING_ELSE_ENTIRELY is not a Mnemos setting and is ignored (the settings are listed in the README).',
    ]);
  });

  it('reports the latest stage and its progress (0..1), and logs each stage once with its duration', () => {
    const lines: string[] = [];
    const readiness = new Readiness({ info: (m) => lines.push(m) });
    readiness.report('loading model');
    readiness.report('downloading model', 0.43);
    assert.deepEqual(readiness.snapshot(), { ready: false, stage: 'downloading model', progress: 0.43 });
    readiness.report('downloading model', 7);
    assert.equal(readiness.snapshot().progress, 1);
    readiness.markReady();
    assert.deepEqual(readiness.snapshot(), { ready: true, stage: 'ready', progress: undefined });
    assert.equal(lines.length, 3, lines.join('\n'));
    assert.match(lines[0]!, /^start stage "loading model" done in \d+ ms$/);
    assert.match(lines[1]!, /^start stage "downloading model" done in \d+ ms$/);
    assert.match(lines[2]!, /^engine ready in \d+ ms$/);
  });

  it('refuses an unknown MNEMOS_API_LOG_FORMAT as a configuration error', () => {
    assert.throws(
      () => loadEngineConfig({ MNEMOS_API_LOG_FORMAT: 'xml' }),
      (e: unknown) => e instanceof ConfigError && /^MNEMOS_API_LOG_FORMAT must be pretty or json/.test(e.message),
    );
    assert.equal(loadEngineConfig({ MNEMOS_API_LOG_FORMAT: 'json' }).logFormat, 'json');
  });
});
