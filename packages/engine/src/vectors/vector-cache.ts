import type { Database, Queryable } from '../db/database.js';
import { BankVectors } from './bank-vectors.js';
import { indexedRowMeta, type IndexedRow } from './indexed-row.js';
import { parseTsvector } from '../keywords/tsvector.js';
import { MEMORY_COLUMNS, MEMORY_COLUMN_COUNT, type MemoryReader } from '../memory/rows.js';

/** One row of the synchronisation query: a changed memory (all its columns), a tombstone, or the snapshot. */
interface DeltaRow extends IndexedRow {
  kind: 'row' | 'gone' | 'snap';
  xmin: string | null;
}

/** Applies synchronisation rows to the bank's copy: changed memories (opened here), tombstones, the snapshot. */
async function apply(
  reader: MemoryReader,
  db: Queryable,
  bank: BankVectors,
  tenant: string,
  rows: readonly DeltaRow[],
): Promise<void> {
  const changed = rows.filter((row) => row.kind === 'row');
  // Bodies are opened (decrypted under encryption at rest) once here, so recall never reads them again. A row that
  // fails to open (tampered, moved) is dropped: it must never be returned.
  const memories = new Map((await reader.open(db, tenant, changed)).map((m) => [m.id, m]));
  for (const row of changed) {
    const memory = memories.get(row.id);
    if (!memory) {
      bank.remove(row.id);
      continue;
    }
    const keywords = parseTsvector(row.fts ?? '');
    const meta = indexedRowMeta(row, memory, keywords.length);
    bank.upsert(meta, keywords.terms, JSON.parse(row.embedding!) as number[]);
  }
  for (const row of rows) {
    if (row.kind === 'gone') bank.remove(row.id);
    if (row.kind === 'snap') bank.syncedFrom = row.xmin!;
  }
}

/**
 * What changed in a bank since a snapshot ($3): changed memories (all columns), tombstones, and the current snapshot to
 * start from next time. `rowLimit` caps the changed memories. The tombstone and snapshot branches pad the memory
 * columns with NULLs (their types come from the first branch).
 */
function syncSql(rowLimit?: number): string {
  const pad = 'NULL, '.repeat(MEMORY_COLUMN_COUNT + 6);
  return `(SELECT 'row' AS kind, ${MEMORY_COLUMNS}, batch_id::text AS batch_id, seq,
          (extract(epoch FROM occurred_at) * 1000)::float8 AS occurred_ms, fts::text AS fts, token_count,
          embedding::text AS embedding, NULL AS xmin
     FROM memories WHERE tenant = $1 AND bank_id = $2 AND writer_xid >= $3::xid8 AND embedding IS NOT NULL
     ${rowLimit === undefined ? '' : `LIMIT ${rowLimit}`})
   UNION ALL
   SELECT 'gone', id, ${pad.slice(0, -2).replace(/^NULL, /, '')}, NULL
     FROM memory_tombstones WHERE tenant = $1 AND bank_id = $2 AND writer_xid >= $3::xid8
   UNION ALL
   SELECT 'snap', ${pad}pg_snapshot_xmin(pg_current_snapshot())::text`;
}

/** The cache's bound when none is set: 512 MiB. */
export const DEFAULT_CACHE_BYTES = 512 * 1024 * 1024;
/** Banks up to this size load within a recall (about a second); larger ones load in the background. */
export const QUICK_LOAD_MEMORIES = 5_000;

/**
 * Semantic search over in-memory copies of each bank's vectors. Before every search the copy is brought up to date
 * with one indexed query that returns only what changed since the last one (see migration 003), so writes by this
 * engine, another engine, or a background job are all seen. Scanning a dense Float32Array in JS is several times
 * faster than pgvector's exact scan inside WebAssembly, and exact (no recall lost to an approximate index).
 */
export class VectorCache {
  private readonly cached = new Map<string, BankVectors>();
  private readonly syncing = new Map<string, Promise<BankVectors>>();
  private stopping = false;

  constructor(
    /** Opens the rows read (decrypting bodies under encryption at rest). */
    private readonly reader: MemoryReader,
    private readonly dimension: number,
    /** Evict the least recently used banks beyond this many bytes in all (BankVectors.bytes estimates each). */
    private readonly maxBytes = DEFAULT_CACHE_BYTES,
    /**
     * Rows per page when a whole bank is loaded. Small pages keep each page's rows (vector text, parsed arrays) young
     * enough to die in the young generation instead of being promoted (docs/benchmarks.md).
     */
    private readonly loadPage = 250,
    /** Banks of up to this many memories load while a recall waits (quick); larger ones load in the background. */
    private readonly quickLoadMemories = QUICK_LOAD_MEMORIES,
  ) {}

  /** The number of memories the bank's in-memory copy holds, or undefined when it is not in memory. */
  cachedSize(tenant: string, bankId: string): number | undefined {
    return this.cached.get(`${tenant}\u0000${bankId}`)?.size;
  }

  /** About how many bytes the banks in memory take (BankVectors.bytes). */
  get bytes(): number {
    let total = 0;
    for (const b of this.cached.values()) total += b.bytes;
    return total;
  }

  /** Waits for the bank's load or synchronisation in progress, if any (whether it succeeds or not). */
  async loading(tenant: string, bankId: string): Promise<void> {
    await this.syncing.get(`${tenant}\u0000${bankId}`)?.catch(() => undefined);
  }

  /** Whether a bank of `memories` memories not in memory yet is worth a recall's wait: quick to load, and it fits. */
  loadsQuickly(memories: number): boolean {
    return memories <= this.quickLoadMemories && this.fits(memories);
  }

  /**
   * Starts loading the bank's copy unless it is in memory, loading, or would not fit the cache; answers at once (the
   * next recall of the bank finds it). A load that fails is forgotten: the next call tries again.
   */
  loadInBackground(db: Database, tenant: string, bankId: string, memories: number): void {
    const key = `${tenant}\u0000${bankId}`;
    if (this.stopping || this.cached.has(key) || this.syncing.has(key) || !this.fits(memories)) return;
    this.synced(db, tenant, bankId).catch(() => undefined);
  }

  /** Whether a bank of `memories` memories would fit in the cache (on its own), by the estimate per memory. */
  fits(memories: number): boolean {
    return memories * this.bytesPerMemory() <= this.maxBytes;
  }

  /** The average size of a memory in the banks in memory, or an estimate before any is. */
  private bytesPerMemory(): number {
    let bytes = 0;
    let memories = 0;
    for (const b of this.cached.values()) {
      bytes += b.bytes;
      memories += b.size;
    }
    return memories >= 100 ? bytes / memories : this.dimension * 2 + 2048;
  }

  /** Makes the preload, and loads of whole banks in progress, give up at their next bank or page (the engine closes). */
  stop(): void {
    this.stopping = true;
  }

  /** Whether stop() was called. */
  get stopped(): boolean {
    return this.stopping;
  }

  /** Whether the bank's index is in memory. */
  has(tenant: string, bankId: string): boolean {
    return this.cached.has(`${tenant}\u0000${bankId}`);
  }

  /**
   * Loads the indexes of the banks most recently written to, as many as fit the cache's budget, one after the other
   * (started after the engine listens, so a restarted engine's first recall of a large bank does not wait for its
   * index). Stops between banks once stop() is called. Banks of `below` memories or more are skipped: the Postgres
   * tier searches them.
   */
  async preload(db: Database, below = Infinity): Promise<number> {
    const banks = await db.query<{ tenant: string; bank_id: string; n: number }>(
      `SELECT b.tenant, b.bank_id, (SELECT count(*) FROM memories m WHERE m.tenant = b.tenant AND m.bank_id = b.bank_id)::int AS n
       FROM banks b ORDER BY b.last_write_at DESC NULLS LAST LIMIT 1000`,
    );
    let total = 0;
    let loaded = 0;
    for (const b of banks) {
      if (this.stopping) break;
      if (b.n === 0 || b.n >= below || !this.fits(total + b.n)) continue;
      total += b.n;
      await this.synced(db, b.tenant, b.bank_id);
      loaded++;
    }
    return loaded;
  }

  /** The banks' indexes, each brought up to date first (for recall arms that need more than the vector scan). */
  async banks(db: Database, tenant: string, bankIds: readonly string[]): Promise<BankVectors[]> {
    const out: BankVectors[] = [];
    for (const bankId of bankIds) out.push(await this.synced(db, tenant, bankId));
    return out;
  }

  /** Forgets every cached bank (e.g. after a re-embedding). */
  clear(): void {
    this.cached.clear();
  }

  private synced(db: Database, tenant: string, bankId: string): Promise<BankVectors> {
    const key = `${tenant}\u0000${bankId}`;
    // Concurrent recalls on one bank share one synchronisation.
    const running = this.syncing.get(key);
    if (running) return running;
    const promise = this.sync(db, key, tenant, bankId).finally(() => this.syncing.delete(key));
    this.syncing.set(key, promise);
    return promise;
  }

  private async sync(db: Database, key: string, tenant: string, bankId: string): Promise<BankVectors> {
    let bank = this.cached.get(key);
    // A sole writer that has written nothing since the last synchronisation has nothing new to read.
    const version = db.writeVersion;
    if (bank && version !== undefined && bank.syncedAtVersion === version) {
      bank.lastUsed = Date.now();
      return bank;
    }
    const fresh = bank === undefined;
    bank ??= new BankVectors(this.dimension);
    const params = [tenant, bankId, bank.syncedFrom];
    // Usually only a few memories changed since the last recall: one query. When more than a page did (a bulk load
    // between two recalls), its answer is dropped and the changes are read through the cursor, like a fresh bank.
    let paged = fresh;
    if (!fresh) {
      const rows = await db.query<DeltaRow>(syncSql(this.loadPage + 1), params);
      paged = rows.filter((row) => row.kind === 'row').length > this.loadPage;
      if (!paged) await apply(this.reader, db, bank, tenant, rows);
    }
    if (paged) {
      // Read through a cursor, a page at a time: one snapshot, but neither the database (whose WebAssembly heap never
      // shrinks, when embedded) nor this process ever holds every row's vector text at once (docs/benchmarks.md).
      const target = bank;
      await db.transaction(async (tx) => {
        await tx.query(`DECLARE mnemos_bank_sync NO SCROLL CURSOR FOR ${syncSql()}`, params);
        for (;;) {
          // A stopping engine does not wait for a large bank to finish loading (a container gets a few seconds).
          if (this.stopping) throw new Error('the engine is stopping; the bank index was not loaded');
          const rows = await tx.query<DeltaRow>(`FETCH ${this.loadPage} FROM mnemos_bank_sync`);
          await apply(this.reader, tx, target, tenant, rows);
          if (rows.length < this.loadPage) break;
        }
        await tx.query('CLOSE mnemos_bank_sync');
      });
    }
    bank.lastUsed = Date.now();
    bank.syncedAtVersion = version;
    if (fresh) this.cached.set(key, bank);
    this.evict(key);
    return bank;
  }

  /** Drops the least recently used banks (never `keepKey`, the one just used) until the rest fit in maxBytes. */
  private evict(keepKey: string): void {
    let total = this.bytes;
    if (total <= this.maxBytes) return;
    const byAge = [...this.cached.entries()]
      .filter(([k]) => k !== keepKey)
      .sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    for (const [k, b] of byAge) {
      if (total <= this.maxBytes) break;
      this.cached.delete(k);
      total -= b.bytes;
    }
  }
}
