import type { Database } from '../db/database.js';
import type { PostgresBankIndex } from '../vectors/storage/postgres-index.js';
import type { VectorCache } from '../vectors/vector-cache.js';
import type { Tier } from './types.js';

/** The Postgres tier of recall: the database's own indexes, for banks too large for the in-memory copy. */
export interface PostgresTier {
  search: PostgresBankIndex;
  /**
   * Banks (with the org bank when included) of at least this many memories are searched in Postgres; on a server,
   * only while their compact copy loads or when it does not fit (they are held compact).
   */
  minMemories: number;
}

/**
 * The compact tier: banks' compact copies in memory (vectors/kernels/compact-bank.ts) for the arms, the database for the
 * pool's rows. For banks whose full copy the cache cannot hold, or of at least `minMemories` memories.
 */
export interface CompactTier {
  /** Reads counts, frequencies, exact vectors and the pool's rows (no vector index is asked for). */
  search: PostgresBankIndex;
  minMemories: number;
}

/** The tiers an engine offers besides the in-memory copy. */
export interface Tiers {
  postgres?: PostgresTier | undefined;
  compact?: CompactTier | undefined;
}

/**
 * Chooses the tier for a recall of `bankIds`. Small banks are searched in memory; a bank not in memory yet loads
 * within the recall when that is quick or the database is the embedded one, else in the background while the database
 * answers, so no recall on a server waits for a long load. On a server, a bank at or above the Postgres tier's
 * threshold is held compact when its compact copy fits (the database then reads rows by id and scores nothing), and
 * searched in the database's indexes while that copy loads or when it does not fit. A bank whose full copy the cache
 * cannot hold gets a compact copy when that fits (loaded the same way), else the Postgres tier. Without other tiers
 * every bank is searched in memory.
 */
export async function chooseTier(
  db: Database,
  cache: VectorCache,
  tiers: Tiers,
  tenant: string,
  bankIds: readonly string[],
): Promise<Tier> {
  const { postgres, compact } = tiers;
  const search = postgres?.search ?? compact?.search;
  if (search === undefined) return 'memory';
  // Only banks large enough for this tier get an HNSW index (and its cost on every insert); a smaller bank answered
  // here while it loads is scanned exactly.
  const large = (): Tier => {
    if (!postgres) return 'memory';
    for (const bankId of bankIds) postgres.search.indexes.request(tenant, bankId);
    return 'postgres';
  };
  if (postgres?.minMemories === 0) return large();
  const server = db.kind !== 'embedded';
  // Every bank held compact: on a server a bank's copy loads in the background like any other (below).
  if (compact?.minMemories === 0 && !server) return 'compact';
  const cached = bankIds.map((b) => cache.cachedSize(tenant, b));
  const inMemory = cached.every((n) => n !== undefined);
  const compacts = bankIds.map((b) => cache.cachedSize(tenant, b, 'compact'));
  const inCompact = compacts.every((n) => n !== undefined);
  // While a copy loads on a server, a whole copy in memory answers, else the database: the Postgres tier, or, with
  // that tier off, the same statements over the bank's rows (its vectors scanned exactly: no index is built for it).
  const compacted = (size: number): Tier => {
    // The embedded database runs one transaction at a time: the load holds it, so the recall waits for it anyway.
    if (inCompact || !server) return 'compact';
    for (const bankId of bankIds) cache.loadInBackground(db, tenant, bankId, size, 'compact');
    return inMemory ? 'memory' : postgres ? large() : 'postgres';
  };
  // The copies in memory know their size; only banks in neither form are counted in the database.
  const held = [cached, compacts].find((sizes) => sizes.every((n) => n !== undefined));
  const size = held ? held.reduce((s, n) => s + n, 0) : await search.count({ tenant, bankIds });
  if (postgres && size >= postgres.minMemories) {
    return server && compact && cache.fits(size, 'compact') ? compacted(size) : large();
  }
  if (compact && size >= compact.minMemories) return compacted(size);
  if (inMemory) return 'memory';
  // A bank the cache cannot hold whole is never loaded whole: it is searched compact, or here, for good.
  if (!cache.fits(size)) return compact && cache.fits(size, 'compact') ? compacted(size) : large();
  // The embedded database runs one transaction at a time and the load reads through a cursor in one: a recall the
  // Postgres tier answered meanwhile would wait for the whole load anyway, and then scan every vector.
  if (cache.loadsQuickly(size) || !server) return 'memory';
  for (const bankId of bankIds) {
    if (cache.cachedSize(tenant, bankId) === undefined) cache.loadInBackground(db, tenant, bankId, size);
  }
  return 'postgres';
}
