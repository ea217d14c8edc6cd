import { createHash } from 'node:crypto';
import pg from 'pg';
import { classifyDatabaseError, unavailableReason } from './availability.js';
import type { Database, Queryable, QueryOptions, SqlParam, Transaction } from './database.js';
import { NotificationListener } from './notifications.js';
import { errorMessage } from '../util/error-message.js';

export interface ExternalDatabaseOptions {
  /** Most connections the engine holds open (MNEMOS_API_DATABASE_POOL_SIZE). */
  poolSize: number;
  /** Longest one statement may run before the server cancels it, 0 for no limit (..._STATEMENT_TIMEOUT_MS). */
  statementTimeoutMs: number;
  /** Hears when the database becomes unreachable and when it answers again. */
  onAvailability?: (available: boolean, reason: string) => void;
}

/**
 * How long a request waits to connect or for a free pooled connection before it fails with 503 database_unavailable:
 * long enough for a busy pool, short enough that a request to an unreachable server does not hang.
 */
const CONNECT_TIMEOUT_MS = 10_000;

/** node-postgres against an external Postgres 15+ with pgvector (MNEMOS_API_DATABASE_URL). */
export async function openExternalDatabase(url: string, options: ExternalDatabaseOptions): Promise<Database> {
  const config: pg.ClientConfig = {
    connectionString: url,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // Finds a peer that vanished without closing the connection (a network partition, a killed host).
    keepAlive: true,
    ...(options.statementTimeoutMs > 0 ? { statement_timeout: options.statementTimeoutMs } : {}),
  };
  const pool = new pg.Pool({ ...config, max: options.poolSize, idleTimeoutMillis: 30_000 });
  const db = new ExternalDatabase(pool, config, options.onAvailability);
  try {
    // Surface a broken server at start, not at the first request.
    const client = await pool.connect();
    client.release();
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new Error(
      `Cannot connect to the database in MNEMOS_API_DATABASE_URL (${errorMessage(error)}); check that the ` +
        'server is running and reachable and that the URL, user and password are right.',
      { cause: error },
    );
  }
  return db;
}

/** Most statement texts whose plans a connection keeps. */
const MOST_KEPT_PLANS = 64;

/**
 * The name a statement's kept plan goes by on each connection (a named prepared statement): one per text, as
 * node-postgres requires.
 */
function keptPlanName(sql: string): string {
  return `mnemos_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`;
}

/**
 * A kept plan the server session does not have (26000), or one that another connection already prepared on the same
 * server session (42P05): the connections reach server sessions that are not their own.
 */
function keptPlanLost(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '26000' || code === '42P05';
}

class ExternalDatabase implements Database {
  readonly kind = 'external' as const;
  /** Other engines may write to the same database: caches must always ask it. */
  readonly writeVersion = undefined;
  private unreachable = false;
  /** Whether the connections keep the statements they prepare: false once one was lost (see `query`). */
  private plansKept = true;
  /** The statement texts whose plans the connections keep (see `mayKeepPlan`). */
  private readonly keptPlanTexts = new Set<string>();
  /** Connections of running sessions, ended on close. */
  private readonly sessions = new Set<pg.Client>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly config: pg.ClientConfig,
    private readonly onAvailability: ExternalDatabaseOptions['onAvailability'],
  ) {
    // A connection can drop while its client sits idle in the pool or while a request holds it between two queries;
    // node-postgres then emits 'error' on the client, which without a listener would end the process. The request on
    // that connection fails at its next query; the pool replaces the connection.
    pool.on('connect', (client) => client.on('error', (error) => this.failed(error)));
    pool.on('error', (error) => this.failed(error));
  }

  async query<T extends object>(sql: string, params: readonly SqlParam[] = [], options?: QueryOptions): Promise<T[]> {
    const values = [...params];
    try {
      const kept = options?.keepPlan === true && this.mayKeepPlan(sql);
      let result: pg.QueryResult<T>;
      try {
        result = await this.pool.query<T>(
          kept ? { name: keptPlanName(sql), text: sql, values } : { text: sql, values },
        );
      } catch (error) {
        if (!kept || !keptPlanLost(error)) throw error;
        // The connections do not keep what they prepare (a pooler handing each statement to any server connection,
        // or one server session shared by several connections): every statement is planned at each call from now on.
        this.plansKept = false;
        result = await this.pool.query<T>({ text: sql, values });
      }
      this.answered();
      return result.rows;
    } catch (error) {
      throw this.failed(error);
    }
  }

  /**
   * Whether this text's plan may be kept: each connection keeps a plan for every text kept so far, so the texts are
   * capped (a filter expression of a new shape makes a new text), and the rest are planned at each call.
   */
  private mayKeepPlan(sql: string): boolean {
    if (!this.plansKept) return false;
    if (this.keptPlanTexts.has(sql)) return true;
    if (this.keptPlanTexts.size >= MOST_KEPT_PLANS) return false;
    this.keptPlanTexts.add(sql);
    return true;
  }

  async transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw this.failed(error);
    }
    let broken: Error | undefined;
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
      this.answered();
      return value;
    } catch (error) {
      // A connection that cannot roll back is dead: it leaves the pool instead of going back to it.
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
      throw this.failed(error);
    } finally {
      client.release(broken);
    }
  }

  async exec(sql: string): Promise<void> {
    try {
      await this.pool.query(sql);
      this.answered();
    } catch (error) {
      throw this.failed(error);
    }
  }

  async session<T>(fn: (session: Queryable) => Promise<T>): Promise<T> {
    // Outside the pool, so a long build neither holds a pooled connection nor keeps close() waiting for it; without
    // the statement timeout (0 is not sent), which is meant for requests.
    const client = new pg.Client({ ...this.config, statement_timeout: 0 });
    client.on('error', (error) => this.failed(error));
    this.sessions.add(client);
    try {
      await client.connect();
      return await fn({
        query: async <R extends object>(sql: string, params: readonly SqlParam[] = []) =>
          (await client.query<R>(sql, [...params])).rows,
      });
    } catch (error) {
      throw this.failed(error);
    } finally {
      this.sessions.delete(client);
      await client.end().catch(() => undefined);
    }
  }

  listen(channel: string, onNotify: () => void): () => Promise<void> {
    const listener = new NotificationListener(this.config, channel, onNotify);
    return () => listener.close();
  }

  stats() {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  async close(): Promise<void> {
    for (const client of this.sessions) await client.end().catch(() => undefined);
    await this.pool.end();
  }

  /** Classifies a failure (see availability.ts) and notes when the server stopped answering. */
  private failed(error: unknown): unknown {
    const classified = classifyDatabaseError(error);
    if (unavailableReason(classified) === 'unreachable' && !this.unreachable) {
      this.unreachable = true;
      this.onAvailability?.(false, errorMessage(error));
    }
    return classified;
  }

  private answered(): void {
    if (!this.unreachable) return;
    this.unreachable = false;
    this.onAvailability?.(true, 'the database answers again');
  }
}
