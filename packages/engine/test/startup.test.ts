// test-runner: long (started first, so the suite does not wait for it at the end)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadEngineConfig } from '../src/index.js';
import { call, tempHome, testEnv } from './helpers/engine.js';
import { memoryPglite } from './helpers/memory-pglite.js';
import { startFakeEmbeddingServer, type FakeEmbeddingServer } from './helpers/fake-embeddings.js';
import { PROCESS_LIMIT_MS, runCliToEnd, spawnEngine } from './helpers/process.js';
import { serveOverTheWire } from './helpers/wire-postgres.js';

const KEY = Buffer.alloc(32, 7).toString('base64');

describe('configuration is validated at start', () => {
  it('uses the documented defaults', () => {
    const c = loadEngineConfig({});
    assert.equal(c.port, 8888);
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.maxBodyBytes, 1024 * 1024);
    assert.match(c.home, /\.mnemos$/);
    assert.deepEqual(c.embeddings, {
      family: 'local',
      model: 'Xenova/all-MiniLM-L6-v2',
      dtype: 'fp32',
      forceCpu: false,
      hubUrl: 'https://huggingface.co',
    });
    assert.equal(c.llm, undefined);
    assert.equal(c.encryptionMasterKey, undefined);
  });

  const bad: Array<[string, Record<string, string>, RegExp]> = [
    ['a port that is not a number', { MNEMOS_API_PORT: 'eighty' }, /^MNEMOS_API_PORT must be a number/],
    ['a port out of range', { MNEMOS_API_PORT: '70000' }, /^MNEMOS_API_PORT must be between 0 and 65535/],
    [
      'a database URL that is not postgres',
      { MNEMOS_API_DATABASE_URL: 'mysql://x' },
      /^MNEMOS_API_DATABASE_URL must be a postgres/,
    ],
    [
      'two embedding families',
      { MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: 'Xenova/x', MNEMOS_API_EMBEDDINGS_COHERE_API_KEY: 'k' },
      /MNEMOS_API_EMBEDDINGS_COHERE_\* and MNEMOS_API_EMBEDDINGS_LOCAL_MODEL/,
    ],
    [
      'a master key that is not base64',
      { MNEMOS_API_ENCRYPTION_MASTER_KEY: 'not base64 !!' },
      /^MNEMOS_API_ENCRYPTION_MASTER_KEY is not base64/,
    ],
    [
      'a master key of the wrong length',
      { MNEMOS_API_ENCRYPTION_MASTER_KEY: Buffer.alloc(16).toString('base64') },
      /must decode to exactly 32 bytes/,
    ],
    ['an unknown LLM provider', { MNEMOS_API_LLM_PROVIDER: 'skynet' }, /^MNEMOS_API_LLM_PROVIDER must be one of/],
    [
      'an LLM provider without a model',
      { MNEMOS_API_LLM_PROVIDER: 'openai', MNEMOS_API_LLM_API_KEY: 'k' },
      /MNEMOS_API_LLM_MODEL is not set/,
    ],
    ['a short auth token', { MNEMOS_API_AUTH_TOKEN: 'short' }, /^MNEMOS_API_AUTH_TOKEN must be at least 16 characters/],
    ['a tiny body limit', { MNEMOS_API_MAX_BODY_BYTES: '10' }, /^MNEMOS_API_MAX_BODY_BYTES must be at least 1024/],
  ];
  for (const [name, env, message] of bad) {
    it(`refuses ${name} with one line naming the variable`, () => {
      assert.throws(
        () => loadEngineConfig(env),
        (e: unknown) => e instanceof ConfigError && message.test(e.message) && !e.message.includes('\n'),
      );
    });
  }

  it('never prints a secret back', () => {
    assert.throws(
      () => loadEngineConfig({ MNEMOS_API_ENCRYPTION_MASTER_KEY: 'sekrit-value!' }),
      (e: unknown) => e instanceof Error && !e.message.includes('sekrit'),
    );
  });

  it('accepts a valid key and LLM settings', () => {
    const c = loadEngineConfig({
      MNEMOS_API_ENCRYPTION_MASTER_KEY: KEY,
      MNEMOS_API_LLM_PROVIDER: 'litellm',
      MNEMOS_API_LLM_MODEL: 'claude',
      MNEMOS_API_LLM_BASE_URL: 'http://127.0.0.1:4000',
    });
    assert.equal(c.encryptionMasterKey?.length, 32);
    assert.equal(c.llm?.provider, 'litellm');
  });

  it('the CLI fails at start with exactly one line and exit code 78 (EX_CONFIG)', async () => {
    const home = tempHome();
    try {
      const r = await runCliToEnd(['serve'], testEnv(home.path, { MNEMOS_API_PORT: 'eighty' }));
      assert.equal(r.code, 78);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, /^mnemos: MNEMOS_API_PORT must be a number/);
    } finally {
      home.remove();
    }
  });
});

describe('start-up checks', () => {
  let fake: FakeEmbeddingServer;
  before(async () => {
    fake = await startFakeEmbeddingServer(8);
  });
  after(async () => {
    await fake?.close();
  });

  it('keeps memories across a restart, and refuses a different embedding model with instructions', async () => {
    const home = tempHome();
    try {
      const first = await spawnEngine(testEnv(home.path));
      const r = await call<{ memory_ids: string[] }>(first.url, 'POST', '/v1/default/banks/persist/memories', {
        content: 'Hana planted tulips along the fence.',
      });
      assert.equal(r.status, 200);
      assert.equal(await first.stop('SIGTERM'), 0);

      const second = await spawnEngine(testEnv(home.path));
      try {
        const found = await call<{ results: Array<{ id: string }> }>(
          second.url,
          'POST',
          '/v1/default/banks/persist/memories/recall',
          { query: 'What did Hana plant?' },
        );
        assert.equal(found.body.results[0]?.id, r.body.memory_ids[0]);
      } finally {
        await second.stop();
      }

      const other = await runCliToEnd(
        ['serve'],
        testEnv(home.path, {
          MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: '',
          MNEMOS_API_EMBEDDINGS_LITELLM_MODEL: 'other',
          MNEMOS_API_EMBEDDINGS_LITELLM_API_BASE: fake.url,
        }),
      );
      assert.equal(other.code, 1);
      assert.match(
        other.stderr,
        /built with the embedding model local:all-MiniLM-L6-v2 \(384 dimensions\) but the engine is configured with litellm:other \(8 dimensions\)/,
      );
      assert.match(other.stderr, /mnemos reembed/);
    } finally {
      home.remove();
    }
  });

  const pgvectorLimit = { timeout: PROCESS_LIMIT_MS + 60_000 };
  it('says how to install pgvector when the external database lacks it', pgvectorLimit, async () => {
    // Its own server whose Postgres has no pgvector to offer (PGlite without the extension, over the wire), so the
    // answer does not depend on what the test machine's server has installed, and nothing is created there.
    const db = await memoryPglite();
    const server = await serveOverTheWire(db);
    const home = tempHome();
    try {
      const r = await runCliToEnd(['serve'], testEnv(home.path, { MNEMOS_API_DATABASE_URL: server.url }));
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /no pgvector extension/);
      assert.match(r.stderr, /postgresql-15-pgvector/);
      const tables = await db.query("SELECT 1 FROM pg_tables WHERE schemaname = 'public'");
      assert.equal(tables.rows.length, 0, 'nothing is created in a database without pgvector');
    } finally {
      home.remove();
      await server.stop();
      await db.close();
    }
  });
});
