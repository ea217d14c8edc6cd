import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { makePrivate, PRIVATE_DIR } from '../util/private-files.js';
import { SMALL_YOUNG_GENERATION, ThreadClient } from '../util/thread.js';
import type { DatabaseThread, DbThreadStart } from './pglite-thread.js';
import { acquireDatabaseLock, type DatabaseLock } from './lock.js';
import { keepStatisticsFresh, type RawSql } from './embedded-statistics.js';
import {
  mayWriteMemories,
  type Database,
  type Queryable,
  type SqlParam,
  type Transaction as TxApi,
} from './database.js';

/**
 * Postgres settings for the embedded database, sized for one process that keeps its hot data (vectors, terms) in its
 * own in-memory index: PGlite's WebAssembly heap only grows (pages once touched stay resident), so the defaults
 * (128 MB of shared buffers) would end up as resident memory once the database outgrows them. Reads beyond the
 * buffers go to the operating system's file cache, which is not the engine's memory.
 */
export const EMBEDDED_SETTINGS: Readonly<Record<string, string>> = {
  shared_buffers: '16MB',
  work_mem: '4MB',
  maintenance_work_mem: '16MB',
  temp_buffers: '2MB',
  wal_buffers: '1MB',
};

/**
 * Embedded Postgres (WebAssembly) with pgvector, its data folder under MNEMOS_HOME, running on its own thread (see
 * EmbeddedDatabase).
 */
export async function openEmbeddedDatabase(
  dataDir: string,
  options: { statisticsCheckMs?: number } = {},
): Promise<Database> {
  mkdirSync(dataDir, { recursive: true, mode: PRIVATE_DIR });
  // One process per data folder (db/lock.ts): `<home>/db.lock` beside `<home>/db`, released on close.
  const lock = acquireDatabaseLock(`${dataDir}.lock`, dataDir);
  try {
    if (!existsSync(join(dataDir, 'PG_VERSION'))) await createDataDirectory(dataDir);
    // initdb (and every release before this one) left the files 0666; from here on the database's thread creates them
    // private (pglite-thread.ts).
    makePrivate(dataDir);
    const settings = Object.entries(EMBEDDED_SETTINGS).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
    const startParams = [...PGlite.defaultStartParams, ...settings];
    const start: DbThreadStart = { dataDir, startParams };
    const thread = await ThreadClient.start<DatabaseThread>(import.meta.url, 'pglite-thread', {
      data: start,
      stopped: (code) =>
        new Error(
          `the embedded database's thread stopped (exit code ${code}); ` +
            'restart Mnemos, and see the log above for why it stopped',
        ),
      resourceLimits: SMALL_YOUNG_GENERATION,
    });
    const db = new EmbeddedDatabase(thread, lock);
    db.startMaintenance(options.statisticsCheckMs ?? STATISTICS_CHECK_MS);
    return db;
  } catch (error) {
    lock.release();
    throw error;
  }
}

/**
 * Creates a new data folder (initdb) in a short-lived child process. Done in this process, initdb's scratch memory
 * (buffers while it builds and writes the cluster) stays in the allocator after it is freed and shows as resident
 * memory for the engine's whole life; the child returns it to the system.
 */
async function createDataDirectory(dataDir: string): Promise<void> {
  const [file, args] = initdbCommand(dataDir);
  await promisify(execFile)(file, args, { maxBuffer: 16 * 1024 * 1024 });
}

/** The child process that creates a new, empty data folder: PGlite's initdb and nothing of the engine's own. */
export function initdbCommand(dataDir: string): [file: string, args: string[]] {
  const script = `import { PGlite } from ${JSON.stringify(import.meta.resolve('@electric-sql/pglite'))};
const pg = await PGlite.create({ dataDir: process.argv[1] });
await pg.close();`;
  return [process.execPath, ['--input-type=module', '-e', script, dataDir]];
}

/** How often the embedded database's statistics are checked while it is written to. */
const STATISTICS_CHECK_MS = 5_000;

/**
 * The embedded database, served by PGlite on its own thread (pglite-thread.ts). PGlite executes every statement
 * synchronously in WebAssembly on the thread that calls it: on the main thread, writes and index synchronisation took
 * about a quarter of the event loop's time under the mixed load (measured with --cpu-prof), time the HTTP server and
 * recall could not use. One thread still serialises the queries, as one PGlite always did.
 */
class EmbeddedDatabase implements Database {
  readonly kind = 'embedded' as const;
  private pending = 0;
  writeVersion = 0;

  private stopMaintenance: (() => Promise<void>) | undefined;

  constructor(
    private readonly thread: ThreadClient<DatabaseThread>,
    private readonly lock: DatabaseLock,
  ) {}

  /**
   * Planner statistics (embedded-statistics.ts): checked a few seconds after opening, then while writes happen. Maintenance
   * statements go straight to PGlite, so they do not count as memory writes (which would make readers resynchronise).
   */
  startMaintenance(intervalMs: number): void {
    const raw: RawSql = {
      query: async <T extends object>(sql: string) => (await this.thread.call('query', [sql, []])) as T[],
    };
    // The first check waits for the first interval (whether or not anything was written), so the migrations that run
    // right after opening, among them 004 (no statistics on content columns), always come before any ANALYZE.
    this.stopMaintenance = keepStatisticsFresh(raw, () => this.writeVersion, intervalMs);
  }

  async query<T extends object>(sql: string, params: readonly SqlParam[] = []): Promise<T[]> {
    this.pending++;
    try {
      return (await this.thread.call('query', [sql, [...params]])) as T[];
    } finally {
      this.pending--;
      if (mayWriteMemories(sql)) this.writeVersion++;
    }
  }

  async transaction<T>(fn: (tx: TxApi) => Promise<T>): Promise<T> {
    // Set inside the transaction's callbacks; an object, so the type checker does not take it as always false.
    const written = { any: false };
    const id = await this.thread.call('begin', []);
    try {
      let result: T;
      try {
        result = await fn({
          query: async <R extends object>(sql: string, params: readonly SqlParam[] = []) => {
            written.any ||= mayWriteMemories(sql);
            return (await this.thread.call('query', [sql, [...params], id])) as R[];
          },
          exec: async (sql: string) => {
            written.any = true;
            await this.thread.call('exec', [sql, id]);
          },
          copyFrom: async (sql: string, data: Uint8Array) => {
            await this.thread.call('query', [sql, [], id, data]);
          },
        });
      } catch (error) {
        await this.thread.call('end', [id, false]).catch(() => undefined);
        throw error;
      }
      await this.thread.call('end', [id, true]);
      return result;
    } finally {
      // Counted when the transaction ends (committed or not), so no reader caches a state it could not see yet.
      if (written.any) this.writeVersion++;
    }
  }

  async exec(sql: string): Promise<void> {
    try {
      await this.thread.call('exec', [sql]);
    } finally {
      this.writeVersion++;
    }
  }

  /** The one connection: PGlite runs each statement by itself and has no statement timeout. */
  async session<T>(fn: (session: Queryable) => Promise<T>): Promise<T> {
    return fn(this);
  }

  stats() {
    // PGlite is one connection that serialises queries; "waiting" is what is queued behind it.
    return { total: 1, idle: this.pending === 0 ? 1 : 0, waiting: Math.max(0, this.pending - 1) };
  }

  async close(): Promise<void> {
    try {
      await this.stopMaintenance?.();
      await this.thread.call('close', []);
      await this.thread.terminate(new Error('the embedded database is closed'));
    } finally {
      this.lock.release();
    }
  }
}
