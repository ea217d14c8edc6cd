// Recall's tier settings: defaults, accepted values, and one clear line naming the variable for a value that cannot work.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadEngineConfig } from '../src/index.js';
import { itRefusesAtStart } from './helpers/refused-settings.js';

const MIB = 1024 * 1024;

describe('recall tier settings', () => {
  it('default to a 512 MiB cache, and the Postgres tier from 100,000 memories on a server', () => {
    const server = loadEngineConfig({ MNEMOS_API_DATABASE_URL: 'postgres://mnemos@db.example:5432/mnemos' });
    assert.deepEqual(server.recall, {
      postgresTierMinMemories: 100_000,
      cacheBytes: 512 * MIB,
      compactMinMemories: Number.POSITIVE_INFINITY,
    });
  });

  it('default on the embedded database to the Postgres tier only for banks the cache cannot hold', () => {
    assert.deepEqual(loadEngineConfig({}).recall, {
      postgresTierMinMemories: Number.POSITIVE_INFINITY,
      cacheBytes: 512 * MIB,
      compactMinMemories: Number.POSITIVE_INFINITY,
    });
    const set = loadEngineConfig({ MNEMOS_API_RECALL_POSTGRES_TIER_MIN_MEMORIES: '100000' });
    assert.equal(set.recall.postgresTierMinMemories, 100_000, 'a threshold set is kept');
  });

  it('accept 0 (every bank in Postgres), off (never), and a cache size in MiB', () => {
    const forced = loadEngineConfig({
      MNEMOS_API_RECALL_POSTGRES_TIER_MIN_MEMORIES: '0',
      MNEMOS_API_RECALL_CACHE_MIB: '64',
    });
    assert.deepEqual(forced.recall, {
      postgresTierMinMemories: 0,
      cacheBytes: 64 * MIB,
      compactMinMemories: Number.POSITIVE_INFINITY,
    });
    const off = loadEngineConfig({ MNEMOS_API_RECALL_POSTGRES_TIER_MIN_MEMORIES: 'off' });
    assert.equal(off.recall.postgresTierMinMemories, undefined);
    const large = loadEngineConfig({ MNEMOS_API_RECALL_POSTGRES_TIER_MIN_MEMORIES: ' 250000 ' });
    assert.equal(large.recall.postgresTierMinMemories, 250_000);
  });

  it('hold banks compact only when the cache cannot hold them whole, unless a size is set (0: every bank)', () => {
    assert.equal(loadEngineConfig({ MNEMOS_API_RECALL_COMPACT_MIN_MEMORIES: '0' }).recall.compactMinMemories, 0);
    assert.equal(
      loadEngineConfig({ MNEMOS_API_RECALL_COMPACT_MIN_MEMORIES: ' 50000 ' }).recall.compactMinMemories,
      50_000,
    );
  });

  itRefusesAtStart([
    ['MNEMOS_API_RECALL_COMPACT_MIN_MEMORIES', '-5', /whole number of memories \(0: every bank\)/],
    ['MNEMOS_API_RECALL_COMPACT_MIN_MEMORIES', 'off', /whole number of memories/],
    ['MNEMOS_API_RECALL_POSTGRES_TIER_MIN_MEMORIES', '-1', /whole number of memories \(0: every bank\) or off/],
    ['MNEMOS_API_RECALL_POSTGRES_TIER_MIN_MEMORIES', '1e5', /whole number of memories/],
    ['MNEMOS_API_RECALL_POSTGRES_TIER_MIN_MEMORIES', 'never', /whole number of memories/],
    ['MNEMOS_API_RECALL_CACHE_MIB', '0', /between 1 and 1048576 MiB/],
    ['MNEMOS_API_RECALL_CACHE_MIB', '1.5', /whole number of MiB/],
    ['MNEMOS_API_RECALL_CACHE_MIB', 'lots', /must be a number of MiB/],
  ]);
});
