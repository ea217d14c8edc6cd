import pg from 'pg';
import type { Database, SqlParam, Transaction } from './database.js';

/** node-postgres against an external Postgres 15+ with pgvector (MNEMOS_API_DATABASE_URL). */
export async function openExternalDatabase(url: string): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: 10, idleTimeoutMillis: 30_000 });
  // Surface a broken server at start, not at the first request.
  const client = await pool.connect();
  client.release();
  return new ExternalDatabase(pool);
}

class ExternalDatabase implements Database {
  readonly kind = 'external' as const;
  /** Other engines may write to the same database: caches must always ask it. */
  readonly writeVersion = undefined;

  constructor(private readonly pool: pg.Pool) {
    // An idle client losing its connection must not crash the process; the pool replaces it.
    pool.on('error', () => undefined);
  }

  async query<T extends object>(sql: string, params: readonly SqlParam[] = []): Promise<T[]> {
    const result = await this.pool.query<T>(sql, [...params]);
    return result.rows;
  }

  async transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const value = await fn({
        query: async <R extends object>(sql: string, params: readonly SqlParam[] = []) =>
          (await client.query<R>(sql, [...params])).rows,
        exec: async (sql: string) => {
          await client.query(sql);
        },
      });
      await client.query('COMMIT');
      return value;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async exec(sql: string): Promise<void> {
    await this.pool.query(sql);
  }

  stats() {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
