import type { Database } from '../db/database.js';
import type { PostgresBankIndex } from '../vectors/postgres-index.js';
import type { VectorCache } from '../vectors/vector-cache.js';

/** The Postgres tier of recall: the database's own indexes, for banks too large for the in-memory copy. */
export interface PostgresTier {
  search: PostgresBankIndex;
  /** Banks (with the org bank when included) of at least this many memories are searched in Postgres. */
  minMemories: number;
}

/** Where a recall's arms search: the engine's in-memory copy of the banks, or the database's indexes. */
export type Tier = 'memory' | 'postgres';

/**
 * Chooses the tier for a recall of `bankIds`. Small banks are searched in memory; a bank not in memory yet loads
 * within the recall when that is quick or the database is the embedded one, else in the background while the Postgres
 * tier answers, so no recall on a server waits for a long load. Without a Postgres tier every bank is searched in
 * memory.
 */
export async function chooseTier(
  db: Database,
  cache: VectorCache,
  tier: PostgresTier | undefined,
  tenant: string,
  bankIds: readonly string[],
): Promise<Tier> {
  if (tier === undefined) return 'memory';
  // Only banks large enough for this tier get an HNSW index (and its cost on every insert); a smaller bank answered
  // here while it loads is scanned exactly.
  const large = (): Tier => {
    for (const bankId of bankIds) tier.search.indexes.request(tenant, bankId);
    return 'postgres';
  };
  if (tier.minMemories === 0) return large();
  const cached = bankIds.map((b) => cache.cachedSize(tenant, b));
  const inMemory = cached.every((n) => n !== undefined);
  const size = inMemory ? cached.reduce((s, n) => s + n, 0) : await tier.search.count({ tenant, bankIds });
  if (size >= tier.minMemories) return large();
  if (inMemory) return 'memory';
  // A bank the cache cannot hold is never loaded: it is searched here for good, so it gets its index too.
  if (!cache.fits(size)) return large();
  // The embedded database runs one transaction at a time and the load reads through a cursor in one: a recall the
  // Postgres tier answered meanwhile would wait for the whole load anyway, and then scan every vector.
  if (cache.loadsQuickly(size) || db.kind === 'embedded') return 'memory';
  for (const bankId of bankIds) {
    if (cache.cachedSize(tenant, bankId) === undefined) cache.loadInBackground(db, tenant, bankId, size);
  }
  return 'postgres';
}
