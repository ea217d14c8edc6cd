import { mkdirSync } from 'node:fs';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { mayWriteMemories, type Database, type SqlParam, type Transaction as TxApi } from './database.js';

/** Embedded Postgres (WebAssembly) with pgvector, its data folder under MNEMOS_HOME. */
export async function openEmbeddedDatabase(dataDir: string): Promise<Database> {
  mkdirSync(dataDir, { recursive: true });
  const pg = await PGlite.create({ dataDir, extensions: { vector } });
  return new EmbeddedDatabase(pg);
}

class EmbeddedDatabase implements Database {
  readonly kind = 'embedded' as const;
  private pending = 0;
  writeVersion = 0;

  constructor(private readonly pg: PGlite) {}

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
    await this.pg.close();
  }
}
