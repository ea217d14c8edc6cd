// test-runner: long (started first, so the suite does not wait for it at the end)
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { loadEngineConfig } from '../src/config/load.js';
import { MemoryStore } from '../src/memory/store.js';
import { openBodyCodec } from '../src/crypto/setup.js';
import { openDatabase } from '../src/db/open.js';
import { createEmbedder } from '../src/embeddings/index.js';
import type { Embedder } from '../src/embeddings/embedder.js';
import { startEngine } from '../src/index.js';
import { reembed } from '../src/memory/reembed.js';
import { call, tempHome, testEnv } from './helpers/engine.js';
import { startFakeEmbeddingServer, type FakeEmbeddingServer } from './helpers/fake-embeddings.js';
import { runCliToEnd } from './helpers/process.js';

/**
 * `mnemos reembed`: a database built with the local model (384 dimensions, encrypted at rest) moves to a hosted
 * OpenAI-compatible model with another dimension (a local fake server speaking the wire format). An interrupted run
 * leaves it on the old model; running again finishes; afterwards the engine starts with the new model and recalls.
 */

const home = tempHome('mnemos-reembed-');
const KEY = randomBytes(32).toString('base64');
let fake: FakeEmbeddingServer;
let oldEnv: Record<string, string>;
let newEnv: Record<string, string>;
const ids: Record<string, string> = {};

const MEMORIES: Array<[bank: string, content: string]> = [
  ['alpha', 'The lighthouse keeper paints the door blue every spring.'],
  ['alpha', 'Quarterly taxes are due on the fifteenth of the month.'],
  ['alpha', 'Grandmother keeps sourdough starter in the cellar.'],
  ['beta', 'The violin needs new strings before the concert.'],
  ['beta', 'Parking permits for the garage renew in January.'],
];

before(async () => {
  fake = await startFakeEmbeddingServer(24);
  oldEnv = testEnv(home.path, { MNEMOS_API_ENCRYPTION_MASTER_KEY: KEY });
  const { MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: _local, ...rest } = oldEnv;
  newEnv = {
    ...rest,
    MNEMOS_API_EMBEDDINGS_LITELLM_MODEL: 'fake-embed',
    MNEMOS_API_EMBEDDINGS_LITELLM_API_BASE: fake.url,
  };
  const engine = await startEngine({ env: oldEnv });
  try {
    for (const [bank, content] of MEMORIES) {
      const r = await call<{ memory_ids: string[] }>(engine.url, 'POST', `/v1/default/banks/${bank}/memories`, {
        content,
      });
      assert.equal(r.status, 200);
      ids[content] = r.body.memory_ids[0]!;
    }
  } finally {
    await engine.close();
  }
});

after(async () => {
  await fake?.close();
  home.remove();
});

async function recallTop(env: Record<string, string>, bank: string, query: string): Promise<string | undefined> {
  const engine = await startEngine({ env });
  try {
    const r = await call<{ results: Array<{ id: string }> }>(
      engine.url,
      'POST',
      `/v1/default/banks/${bank}/memories/recall`,
      { query },
    );
    assert.equal(r.status, 200);
    return r.body.results[0]?.id;
  } finally {
    await engine.close();
  }
}

describe('mnemos reembed', () => {
  it('refuses to start with another model, naming the fix', async () => {
    await assert.rejects(
      startEngine({ env: newEnv }),
      /built with the embedding model local:all-MiniLM-L6-v2 \(384 dimensions\).*mnemos reembed/,
    );
  });

  it('leaves the database on the old model when interrupted', async () => {
    const config = loadEngineConfig(newEnv);
    const { db } = await openDatabase(config);
    const hosted = await createEmbedder(config.embeddings, config.home, () => undefined);
    let calls = 0;
    const failing: Embedder = {
      id: hosted.id,
      dimension: hosted.dimension,
      embed: (texts, kind) =>
        calls++ === 0 ? hosted.embed(texts, kind) : Promise.reject(new Error('provider went away')),
      close: () => hosted.close(),
    };
    try {
      const codec = await openBodyCodec(db, config.encryptionMasterKey, () => undefined);
      await assert.rejects(reembed(new MemoryStore(db, codec), failing, { batchSize: 2 }), /provider went away/);
      const [half] = await db.query<{ n: number }>('SELECT count(embedding_next)::int AS n FROM memories');
      assert.equal(half?.n, 2);
    } finally {
      await db.close();
    }
    // The old model still serves; the new one is refused with a hint that a re-embedding is unfinished.
    assert.equal(await recallTop(oldEnv, 'alpha', 'When are the quarterly taxes due?'), ids[MEMORIES[1]![1]]);
    await assert.rejects(startEngine({ env: newEnv }), /started and not finished: run it again/);
  });

  it('finishes when run again, and the engine then starts with the new model and recalls', async () => {
    const run = await runCliToEnd(['reembed', '--batch-size', '2'], newEnv);
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout,
      /re-embedded 3 memories from local:all-MiniLM-L6-v2 to litellm:fake-embed \(24 dimensions\)/,
    );

    const engine = await startEngine({ env: newEnv });
    try {
      const dims = await engine.engine.db.query<{ d: number; n: number }>(
        'SELECT vector_dims(embedding) AS d, count(*)::int AS n FROM memories GROUP BY 1',
      );
      assert.deepEqual(dims, [{ d: 24, n: MEMORIES.length }]);
      for (const [bank, content] of MEMORIES) {
        // The fake model embeds bags of words: the memory's own words find it, in its own bank only.
        const r = await call<{ results: Array<{ id: string; text: string }> }>(
          engine.url,
          'POST',
          `/v1/default/banks/${bank}/memories/recall`,
          {
            query: content.replace(/\.$/, '').toLowerCase(),
          },
        );
        assert.equal(r.body.results[0]?.id, ids[content]);
        assert.equal(r.body.results[0]?.text, content);
      }
      // New memories are embedded with the new model too.
      const added = await call(engine.url, 'POST', '/v1/default/banks/beta/memories', {
        content: 'The piano tuner comes on Friday.',
      });
      assert.equal(added.status, 200);
    } finally {
      await engine.close();
    }
    await assert.rejects(
      startEngine({ env: oldEnv }),
      /built with the embedding model litellm:fake-embed \(24 dimensions\)/,
    );

    const again = await runCliToEnd(['reembed'], newEnv);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /already uses litellm:fake-embed/);
  });
});
