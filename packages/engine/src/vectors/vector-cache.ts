import type { Database, Queryable } from '../db/database.js';
import { binaryVectorSql, vectorFromBase64 } from '../db/vector-copy.js';
import { BankVectors } from './kernels/bank-vectors.js';
import { CompactBank } from './kernels/compact-bank.js';
import {
  COMPACT_COLUMNS,
  compactRow,
  INDEXED_COLUMNS,
  indexedRowFromJson,
  indexedRowMeta,
  type CompactSource,
} from './storage/indexed-row.js';
import { ResidualLevels } from './kernels/residual-bits.js';
import { parseTsvector } from '../keywords/tsvector.js';
import { BANK_SIZE_SQL } from './storage/statistics-folder.js';
import { closeBankNumber, type ClosedLog } from './storage/bank-close.js';
import type { MemoryReader } from '../memory/rows.js';

/**
 * One row of the synchronisation query: a changed memory (`row`: all its columns as one JSON text, see
 * indexedRowFromJson), a tombstone (`id`), or the bank's log state.
 */
interface DeltaRow {
  kind: 'row' | 'gone' | 'snap';
  row: string | null;
  id: string | null;
  /** On the 'gone' row, the tombstone's change number; on the 'snap' row, the bank's latest. */
  version: string | null;
  log_id: string | null;
  pruned_to: string | null;
}

/** The bank's change log as one synchronisation read it. */
interface LogState {
  changeSeq: number;
  logId: string;
  prunedTo: number;
}

/** A bank's copy in memory: whole (bodies, int16 vectors), or compact for banks too large for that. */
export type BankCopy = BankVectors | CompactBank;

/** Applies synchronisation rows to the bank's copy: changed memories (opened here), tombstones, the snapshot. */
async function apply(
  reader: MemoryReader,
  db: Queryable,
  bank: BankCopy,
  tenant: string,
  rows: readonly DeltaRow[],
): Promise<LogState | undefined> {
  if (bank instanceof CompactBank) {
    // No bodies: recall reads the pool's rows from the database, and drops there the ones that fail to open.
    for (const delta of rows) {
      if (delta.kind !== 'row') continue;
      const row = JSON.parse(delta.row!) as CompactSource;
      const keywords = parseTsvector(row.fts ?? '');
      bank.upsert(compactRow(row, keywords.length), keywords.terms, vectorFromBase64(row.embedding!));
    }
  } else {
    const changed = rows.flatMap((row) => (row.kind === 'row' ? [indexedRowFromJson(row.row!)] : []));
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
      bank.upsert(meta, keywords.terms, vectorFromBase64(row.embedding!));
    }
  }
  let log: LogState | undefined;
  for (const row of rows) {
    if (row.kind === 'gone') bank.remove(row.id!);
    if (row.kind === 'snap') log = logState(row);
  }
  if (log) {
    bank.changeSeq = log.changeSeq;
    bank.changeLogId = log.logId;
  }
  return log;
}

/** The columns a copy reads of each changed memory: every one for a full copy, no bodies for a compact one. */
function columnsOf(bank: BankCopy): string {
  return bank instanceof CompactBank ? COMPACT_COLUMNS : INDEXED_COLUMNS;
}

function logState(row: DeltaRow): LogState {
  return { changeSeq: Number(row.version), logId: row.log_id!, prunedTo: Number(row.pruned_to) };
}

/**
 * What changed in a bank after change number $3: changed memories (`columns` as one JSON text each), tombstones
 * (none for a first load, $3 = -1), and the bank's log state ('snap': its latest number, log id and pruning mark;
 * absent while the bank does not exist). One statement, so one snapshot: every change up to the bank's closed number
 * read here is read with it, and no change that commits later takes that number (see migration 014). Changes under the
 * open number committed so far are read too, and again next time, until a close moves the number past them.
 * `rowLimit` caps the changed memories.
 */
function syncSql(columns: string, rowLimit?: number): string {
  return `(SELECT 'row' AS kind, to_json(m)::text AS row, NULL::text AS id, NULL::text AS version, NULL::text AS log_id,
          NULL::text AS pruned_to
     FROM (SELECT ${columns} FROM memories
           WHERE tenant = $1 AND bank_id = $2 AND change_seq > $3::bigint AND embedding IS NOT NULL
           ${rowLimit === undefined ? '' : `LIMIT ${Math.trunc(rowLimit)}`}) m)
   UNION ALL
   SELECT 'gone', NULL, id::text, change_seq::text, NULL, NULL
     FROM memory_tombstones WHERE tenant = $1 AND bank_id = $2 AND change_seq > $3::bigint AND $3::bigint >= 0
   UNION ALL
   SELECT 'snap', NULL, NULL, change_seq::text, change_log_id::text, tombstones_pruned_to::text
     FROM banks WHERE tenant = $1 AND bank_id = $2`;
}

/** Vectors a compact copy's two-bit levels are learnt from, and how many a statement reads. */
const LEVELS_SAMPLE = 2_000;
const SAMPLE_PAGE = 500;
/** Room a compact copy is made with beyond the bank's size, for the memories retained after its load. */
const COMPACT_SLACK = 1.125;

/**
 * An empty compact copy for a bank: its two-bit levels learnt from the bank's first LEVELS_SAMPLE vectors (none when
 * it has no vectors yet), with room for the bank's memories, so a large copy is not grown by doubling as it loads.
 */
async function emptyCompactCopy(db: Queryable, dimension: number, tenant: string, bankId: string) {
  const sample: Float32Array[] = [];
  // A page of vectors as one text (joined by commas): the embedded database's client handles one field, not one per
  // row, and the database's own memory (which never shrinks, when embedded) holds one page's text at a time.
  for (let offset = 0; offset < LEVELS_SAMPLE; offset += SAMPLE_PAGE) {
    const [page] = await db.query<{ vectors: string | null }>(
      `SELECT string_agg(${binaryVectorSql('embedding')}, ',') AS vectors FROM (SELECT embedding FROM memories
         WHERE tenant = $1 AND bank_id = $2 AND embedding IS NOT NULL LIMIT ${SAMPLE_PAGE} OFFSET ${offset}) m`,
      [tenant, bankId],
    );
    const vectors = page?.vectors?.split(',') ?? [];
    for (const text of vectors) sample.push(vectorFromBase64(text));
    if (vectors.length < SAMPLE_PAGE) break;
  }
  const [bank] = await db.query<{ memories: number }>(
    `SELECT ${BANK_SIZE_SQL}::int AS memories FROM banks b WHERE tenant = $1 AND bank_id = $2`,
    [tenant, bankId],
  );
  const capacity = Math.max(64, Math.ceil((bank?.memories ?? 0) * COMPACT_SLACK));
  return new CompactBank(dimension, ResidualLevels.learn(sample), capacity);
}

/** Ids of a bank's memories with a vector. */
const LIVE_IDS_SQL = `SELECT id::text AS id FROM memories WHERE tenant = $1 AND bank_id = $2 AND embedding IS NOT NULL`;

/** The synchronisation of one bank in progress, and the one queued behind it. */
interface BankSync {
  running: Promise<BankCopy>;
  next: Promise<BankCopy> | undefined;
}

/** The cache's bound when none is set: 512 MiB. */
export const DEFAULT_CACHE_BYTES = 512 * 1024 * 1024;
/**
 * Banks up to this size load within a recall (about a second: a load takes about 70 us of CPU a memory, see
 * `npm run bench:cold-load`); larger ones load in the background.
 */
export const QUICK_LOAD_MEMORIES = 15_000;

/** Closes of a bank's open number that find writers in flight before one waits for them, and how long it waits. */
const CLOSES_SKIPPED_BEFORE_WAIT = 4;
const CLOSE_WAIT_MS = 200;

/** Whether the copy holds every change the close found committed (none past the closed number, which it has). */
function upToDate(bank: BankCopy, closed: ClosedLog): boolean {
  return !closed.pending && closed.logId === bank.changeLogId && closed.changeSeq === bank.changeSeq;
}

/** The form of a bank's copy. */
export type CopyForm = 'full' | 'compact';

function keyOf(tenant: string, bankId: string, form: CopyForm): string {
  return form === 'full' ? `${tenant}\u0000${bankId}` : `${tenant}\u0000${bankId}\u0000compact`;
}

/**
 * Semantic search over in-memory copies of each bank's vectors. Before every search the copy is brought up to date
 * with one indexed query that returns only what changed since the change number it has (see migrations 005 and 014), so
 * writes by this engine, another engine, or a background job are all seen. Scanning a dense Float32Array in JS is
 * several times faster than pgvector's exact scan inside WebAssembly, and exact (no recall lost to an approximate
 * index).
 */
export class VectorCache {
  private readonly cached = new Map<string, BankCopy>();
  private readonly syncing = new Map<string, BankSync>();
  /** Banks whose open change number the last closes in a row found writers in flight for, and how many. */
  private readonly closesSkipped = new Map<string, number>();
  private stopping = false;

  constructor(
    /** Opens the rows read (decrypting bodies under encryption at rest). */
    private readonly reader: MemoryReader,
    private readonly dimension: number,
    /** Evict the least recently used banks beyond this many bytes in all (each copy's `bytes` estimates it). */
    private readonly maxBytes = DEFAULT_CACHE_BYTES,
    /**
     * Rows per page when a whole bank is loaded. Small pages keep each page's rows (vector text, parsed arrays) young
     * enough to die in the young generation instead of being promoted (docs/benchmarks.md).
     */
    private readonly loadPage = 250,
    /** Banks of up to this many memories load while a recall waits (quick); larger ones load in the background. */
    private readonly quickLoadMemories = QUICK_LOAD_MEMORIES,
  ) {}

  /** The number of memories the bank's copy in this form holds, or undefined when it is not in memory. */
  cachedSize(tenant: string, bankId: string, form: CopyForm = 'full'): number | undefined {
    return this.cached.get(keyOf(tenant, bankId, form))?.size;
  }

  /** About how many bytes the banks in memory take (each copy's `bytes`). */
  get bytes(): number {
    let total = 0;
    for (const b of this.cached.values()) total += b.bytes;
    return total;
  }

  /** The copies in memory by form: their bytes (each copy's `bytes`) and memories. */
  usage(): Record<CopyForm, { bytes: number; memories: number }> {
    const usage = { full: { bytes: 0, memories: 0 }, compact: { bytes: 0, memories: 0 } };
    for (const b of this.cached.values()) {
      const form = usage[b instanceof CompactBank ? 'compact' : 'full'];
      form.bytes += b.bytes;
      form.memories += b.size;
    }
    return usage;
  }

  /** Waits for the bank's load or synchronisation in progress, if any (whether it succeeds or not). */
  async loading(tenant: string, bankId: string, form: CopyForm = 'full'): Promise<void> {
    const state = this.syncing.get(keyOf(tenant, bankId, form));
    await (state?.next ?? state?.running)?.catch(() => undefined);
  }

  /** Whether a bank of `memories` memories not in memory yet is worth a recall's wait: quick to load, and it fits. */
  loadsQuickly(memories: number): boolean {
    return memories <= this.quickLoadMemories && this.fits(memories);
  }

  /**
   * Starts loading the bank's copy unless it is in memory, loading, or would not fit the cache; answers at once (the
   * next recall of the bank finds it). A load that fails is forgotten: the next call tries again.
   */
  loadInBackground(db: Database, tenant: string, bankId: string, memories: number, form: CopyForm = 'full'): void {
    const key = keyOf(tenant, bankId, form);
    if (this.stopping || this.cached.has(key) || this.syncing.has(key) || !this.fits(memories, form)) return;
    this.synced(db, tenant, bankId, form).catch(() => undefined);
  }

  /** Whether a bank of `memories` memories would fit in the cache (on its own) in this form, by the estimate per memory. */
  fits(memories: number, form: CopyForm = 'full'): boolean {
    return memories * this.bytesPerMemory(form) <= this.maxBytes;
  }

  /** The average size of a memory in the banks in memory in this form, or an estimate before any is. */
  private bytesPerMemory(form: CopyForm): number {
    let bytes = 0;
    let memories = 0;
    for (const b of this.cached.values()) {
      if (b instanceof CompactBank !== (form === 'compact')) continue;
      bytes += b.bytes;
      memories += b.size;
    }
    if (memories >= 100) return bytes / memories;
    return form === 'full' ? this.dimension * 2 + 2048 : this.dimension / 8 + 256;
  }

  /** Makes the preload, and loads of whole banks in progress, give up at their next bank or page (the engine closes). */
  stop(): void {
    this.stopping = true;
  }

  /** Whether stop() was called. */
  get stopped(): boolean {
    return this.stopping;
  }

  /** Whether the bank's copy in this form is in memory. */
  has(tenant: string, bankId: string, form: CopyForm = 'full'): boolean {
    return this.cached.has(keyOf(tenant, bankId, form));
  }

  /**
   * Loads the indexes of the banks most recently written to, as many as fit the cache's budget, one after the other
   * (started after the engine listens, so a restarted engine's first recall of a large bank does not wait for its
   * index). Stops between banks once stop() is called. A bank too large for a full copy gets a compact one when that
   * fits; so does, on a server, a bank of `below` memories or more (recall holds those compact, recall/tier.ts), and
   * such a bank is skipped on the embedded database, where the Postgres tier searches it.
   */
  async preload(db: Database, below = Infinity): Promise<number> {
    // The sizes are the ones the writes keep (migrations 008 and 013): no count of every bank's rows at start.
    const banks = await db.query<{ tenant: string; bank_id: string; n: number }>(
      `SELECT tenant, bank_id, ${BANK_SIZE_SQL}::int AS n FROM banks b ORDER BY last_write_at DESC NULLS LAST LIMIT 1000`,
    );
    let loaded = 0;
    for (const b of banks) {
      if (this.stopping) break;
      const large = b.n >= below;
      if (b.n === 0 || (large && (db.kind === 'embedded' || !this.fits(b.n, 'compact')))) continue;
      const form: CopyForm = (large || !this.fits(b.n)) && this.fits(b.n, 'compact') ? 'compact' : 'full';
      // The room left after the banks loaded so far, as they measure: a load never evicts one loaded before it.
      if (this.bytes + b.n * this.bytesPerMemory(form) > this.maxBytes) continue;
      await this.synced(db, b.tenant, b.bank_id, form);
      loaded++;
    }
    return loaded;
  }

  /** The banks' indexes, each brought up to date first (for recall arms that need more than the vector scan). */
  async banks(db: Database, tenant: string, bankIds: readonly string[]): Promise<BankVectors[]> {
    const out: BankVectors[] = [];
    for (const bankId of bankIds) {
      const bank = await this.synced(db, tenant, bankId, 'full');
      if (bank instanceof BankVectors) out.push(bank);
    }
    return out;
  }

  /** The banks' compact copies, each brought up to date first (loaded when not in memory). */
  async compactBanks(db: Database, tenant: string, bankIds: readonly string[]): Promise<CompactBank[]> {
    const out: CompactBank[] = [];
    for (const bankId of bankIds) {
      const bank = await this.synced(db, tenant, bankId, 'compact');
      if (bank instanceof CompactBank) out.push(bank);
    }
    return out;
  }

  /** Forgets every cached bank (e.g. after a re-embedding). */
  clear(): void {
    this.cached.clear();
  }

  /**
   * The bank brought up to date by a synchronisation that starts after this call: one already running may have read
   * the database before the caller's write was acknowledged, so the call waits for the next one, which starts when the
   * running one ends and which every call arriving meanwhile shares.
   */
  private synced(db: Database, tenant: string, bankId: string, form: CopyForm = 'full'): Promise<BankCopy> {
    const key = keyOf(tenant, bankId, form);
    const state = this.syncing.get(key);
    if (!state) return this.startSync(db, key, tenant, bankId, form);
    state.next ??= state.running.then(
      () => this.startSync(db, key, tenant, bankId, form),
      () => this.startSync(db, key, tenant, bankId, form),
    );
    return state.next;
  }

  private startSync(db: Database, key: string, tenant: string, bankId: string, form: CopyForm): Promise<BankCopy> {
    const state: BankSync = { running: this.sync(db, key, tenant, bankId, form), next: undefined };
    this.syncing.set(key, state);
    const settled = () => {
      // The queued synchronisation, if any, replaces this state when it starts.
      if (this.syncing.get(key) === state && state.next === undefined) this.syncing.delete(key);
    };
    state.running.then(settled, settled);
    return state.running;
  }

  private async sync(db: Database, key: string, tenant: string, bankId: string, form: CopyForm): Promise<BankCopy> {
    let bank = this.cached.get(key);
    // A sole writer that has written nothing since the last synchronisation has nothing new to read.
    const version = db.writeVersion;
    if (bank && version !== undefined && bank.syncedAtVersion === version) {
      bank.lastUsed = Date.now();
      return bank;
    }
    const closed = await this.closeOpenNumber(db, tenant, bankId);
    // Nothing committed past the number the copy has: no read. Else the copy catches up, and a compact copy that has
    // many dead rows (memories removed or edited) is read again rather than kept growing.
    if (bank && !(closed && upToDate(bank, closed)) && !(await this.catchUp(db, bank, tenant, bankId))) {
      this.cached.delete(key);
      bank = undefined;
    }
    if (bank instanceof CompactBank && bank.wasteful) {
      this.cached.delete(key);
      bank = undefined;
    }
    if (!bank) {
      bank =
        form === 'full' ? new BankVectors(this.dimension) : await emptyCompactCopy(db, this.dimension, tenant, bankId);
      await this.readPaged(db, bank, tenant, bankId);
      this.cached.set(key, bank);
      // One copy of a bank at a time: the new form replaces the other (a recall that chose it answers from this one).
      this.cached.delete(keyOf(tenant, bankId, form === 'full' ? 'compact' : 'full'));
    }
    bank.lastUsed = Date.now();
    bank.syncedAtVersion = version;
    // A bank that grew counts at its new size too.
    this.evict(key);
    return bank;
  }

  /**
   * Closes the bank's open change number (migration 014) so that the read after it reaches the changes committed so
   * far. It does not wait for writers in flight, unless it found them in flight several times running: then it waits
   * a moment, so that on a bank never free of writers the changes re-read under the open number stay few.
   */
  private async closeOpenNumber(db: Database, tenant: string, bankId: string): Promise<ClosedLog | undefined> {
    const key = keyOf(tenant, bankId, 'full');
    const skipped = this.closesSkipped.get(key) ?? 0;
    const closed = await closeBankNumber(db, tenant, bankId, skipped >= CLOSES_SKIPPED_BEFORE_WAIT ? CLOSE_WAIT_MS : 0);
    if (closed?.pending) this.closesSkipped.set(key, skipped + 1);
    else this.closesSkipped.delete(key);
    return closed;
  }

  /**
   * Brings a loaded copy up to date; false when it must be loaded again instead (the bank was deleted, or its change
   * log started over).
   */
  private async catchUp(db: Database, bank: BankCopy, tenant: string, bankId: string): Promise<boolean> {
    const from = bank.changeSeq;
    const logId = bank.changeLogId;
    // Usually only a few memories changed since the last recall: one query. When more than a page did (a bulk load
    // between two recalls), its answer is dropped and the changes are read through the cursor, like a fresh bank.
    const rows = await db.query<DeltaRow>(syncSql(columnsOf(bank), this.loadPage + 1), [tenant, bankId, from]);
    const snap = rows.find((row) => row.kind === 'snap');
    if (snap?.log_id !== logId) return false;
    let log: LogState | undefined;
    if (rows.filter((row) => row.kind === 'row').length > this.loadPage) {
      log = await this.readPaged(db, bank, tenant, bankId);
      if (log?.logId !== logId) return false;
    } else {
      log = await apply(this.reader, db, bank, tenant, rows);
    }
    // Tombstones after `from` may have been pruned: memories deleted meanwhile are found by their absence instead.
    if (log && log.prunedTo > from) await this.dropDeleted(db, bank, tenant, bankId);
    return true;
  }

  /**
   * Reads the changes after the copy's number through a cursor, a page at a time (all of them for a new copy): one
   * snapshot, but neither the database (whose WebAssembly heap never shrinks, when embedded) nor this process ever
   * holds every row at once (docs/benchmarks.md). The next page is asked for before this one is applied, so the
   * database produces it (on its own thread, when embedded) while this thread indexes the rows. Answers the log state
   * read, if the bank exists.
   */
  private readPaged(db: Database, bank: BankCopy, tenant: string, bankId: string): Promise<LogState | undefined> {
    return db.transaction(async (tx) => {
      await tx.query(`DECLARE mnemos_bank_sync NO SCROLL CURSOR FOR ${syncSql(columnsOf(bank))}`, [
        tenant,
        bankId,
        bank.changeSeq,
      ]);
      const fetchPage = () => tx.query<DeltaRow>(`FETCH ${this.loadPage} FROM mnemos_bank_sync`);
      let next: Promise<DeltaRow[]> | undefined = fetchPage();
      let log: LogState | undefined;
      try {
        while (next) {
          const rows: DeltaRow[] = await next;
          next = rows.length < this.loadPage ? undefined : fetchPage();
          // A stopping engine does not wait for a large bank to finish loading (a container gets a few seconds).
          if (this.stopping) throw new Error('the engine is stopping; the bank index was not loaded');
          log = (await apply(this.reader, tx, bank, tenant, rows)) ?? log;
        }
      } catch (error) {
        // The page asked for ahead is not read: its outcome (rows, or the same failure) is dropped.
        await next?.catch(() => undefined);
        throw error;
      }
      await tx.query('CLOSE mnemos_bank_sync');
      return log;
    });
  }

  /**
   * Removes from the copy the memories the database no longer holds, by listing the bank's ids through a cursor (a few
   * dozen bytes each, not the rows). The listing's snapshot is newer than the changes the copy just read, so every id
   * the copy holds was committed before it: an id missing from it was deleted.
   */
  private async dropDeleted(db: Database, bank: BankCopy, tenant: string, bankId: string): Promise<void> {
    const unseen = new Set(bank.ids());
    const page = this.loadPage * 40;
    await db.transaction(async (tx) => {
      await tx.query(`DECLARE mnemos_bank_ids NO SCROLL CURSOR FOR ${LIVE_IDS_SQL}`, [tenant, bankId]);
      for (;;) {
        const rows = await tx.query<{ id: string }>(`FETCH ${page} FROM mnemos_bank_ids`);
        for (const row of rows) unseen.delete(row.id);
        if (rows.length < page) break;
      }
      await tx.query('CLOSE mnemos_bank_ids');
    });
    for (const id of unseen) bank.remove(id);
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
