import type { Engine } from '../../src/engine.js';
import type { RecallDependencies } from '../../src/recall/pipeline.js';
import type { Tier } from '../../src/recall/types.js';
import { PostgresBankIndex } from '../../src/vectors/storage/postgres-index.js';
import { VectorCache } from '../../src/vectors/vector-cache.js';

/**
 * Recall's dependencies on `engine`'s parts, searching on `tier` from its first memory (no size threshold), with a
 * cache of their own: a test calls the recall pipeline on each tier against the same bank.
 */
export function recallOnTier(engine: Engine, tier: Tier): RecallDependencies {
  const search = new PostgresBankIndex(engine.db, engine.store);
  return {
    db: engine.db,
    index: new VectorCache(engine.store, 384),
    codec: engine.codec,
    embedder: engine.embedder,
    ...(tier === 'postgres' ? { postgres: { search, minMemories: 0 } } : {}),
    ...(tier === 'compact' ? { compact: { search, minMemories: 0 } } : {}),
  };
}
