import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { keepStatisticsFresh, type RawSql } from './embedded-statistics.js';
import { mayWriteMemories, type Database, type SqlParam, type Transaction as TxApi } from './database.js';

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

/** Embedded Postgres (WebAssembly) with pgvector, its data folder under MNEMOS_HOME. */
export async function openEmbeddedDatabase(dataDir: string): Promise<Database> {
  mkdirSync(dataDir, { recursive: true });
  if (!existsSync(join(dataDir, 'PG_VERSION'))) await createDataDirectory(dataDir);
  const startParams = [...PGlite.defaultStartParams, ...Object.entries(EMBEDDED_SETTINGS).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
  const pg = await PGlite.create({ dataDir, extensions: { vector }, startParams });
  const db = new EmbeddedDatabase(pg);
  db.startMaintenance();
  return db;
}

/**
 * Creates a new data folder (initdb) in a short-lived child process. Done in this process, initdb's scratch memory
 * (a few hundred MB of buffers while it builds and writes the cluster) stays in the allocator after it is freed and
 * shows as about 170 MB more resident memory for the engine's whole life; the child returns it to the system.
 */
async function createDataDirectory(dataDir: string): Promise<void> {
  const script = `import { PGlite } from ${JSON.stringify(import.meta.resolve('@electric-sql/pglite'))};
const pg = await PGlite.create({ dataDir: process.argv[1] });
await pg.close();`;
  await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script, dataDir], { maxBuffer: 16 * 1024 * 1024 });
}

/** How often the embedded database's statistics are checked while it is written to. */
const STATISTICS_CHECK_MS = 5_000;

class EmbeddedDatabase implements Database {
  readonly kind = 'embedded' as const;
  private pending = 0;
  writeVersion = 0;

  private stopMaintenance: (() => Promise<void>) | undefined;

  constructor(private readonly pg: PGlite) {}

  /**
   * Planner statistics (embedded-statistics.ts): checked a few seconds after opening, then while writes happen. Maintenance
   * statements go straight to PGlite, so they do not count as memory writes (which would make readers resynchronise).
   */
  startMaintenance(): void {
    const raw: RawSql = { query: async <T extends object>(sql: string) => (await this.pg.query<T>(sql)).rows };
    // The first check waits for the first interval (whether or not anything was written), so the migrations that run
    // right after opening, among them 004 (no statistics on content columns), always come before any ANALYZE.
    this.stopMaintenance = keepStatisticsFresh(raw, () => this.writeVersion, STATISTICS_CHECK_MS);
  }

  async query<T extends object>(sql: string, params: readonly SqlParam[] = []): Promise<T[]> {
    this.pending++;
    try {
      const result = await this.pg.query<T>(sql, [...params]);
      return result.rows;
    } finally {
      this.pending--;
      if (mayWriteMemories(sql)) this.writeVersion++;
    }
  }

  async transaction<T>(fn: (tx: TxApi) => Promise<T>): Promise<T> {
    let wrote = false;
    try {
      return await this.pg.transaction(async (tx: Transaction) =>
        fn({
          query: async <R extends object>(sql: string, params: readonly SqlParam[] = []) => {
            wrote ||= mayWriteMemories(sql);
            return (await tx.query<R>(sql, [...params])).rows;
          },
          exec: async (sql: string) => {
            wrote = true;
            await tx.exec(sql);
          },
          copyFrom: async (sql: string, data: Uint8Array) => {
            await tx.query(sql, [], { blob: new Blob([data]) });
          },
        }),
      );
    } finally {
      // Counted when the transaction ends (committed or not), so no reader caches a state it could not see yet.
      if (wrote) this.writeVersion++;
    }
  }

  async exec(sql: string): Promise<void> {
    try {
      await this.pg.exec(sql);
    } finally {
      this.writeVersion++;
    }
  }

  stats() {
    // PGlite is one connection that serialises queries; "waiting" is what is queued behind it.
    return { total: 1, idle: this.pending === 0 ? 1 : 0, waiting: Math.max(0, this.pending - 1) };
  }

  async close(): Promise<void> {
    await this.stopMaintenance?.();
    await this.pg.close();
  }
}
