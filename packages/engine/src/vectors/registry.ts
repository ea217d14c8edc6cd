import { VectorCache } from './vector-cache.js';

/** The vector cache of a database handle (attached once at engine start; see engine.ts). */
const caches = new WeakMap<object, VectorCache>();

export function attachVectorCache(db: object, dimension: number): VectorCache {
  const cache = new VectorCache(dimension);
  caches.set(db, cache);
  return cache;
}

export function vectorCacheFor(db: object): VectorCache | undefined {
  return caches.get(db);
}
