/**
 * The one database interface the engine codes against. Two implementations: embedded PGlite and node-postgres
 * against an external server. Same SQL, same migrations.
 */
export type SqlParam = string | number | boolean | null | Date | Buffer | Uint8Array | Array<string | null> | number[];

export interface QueryOptions {
  /**
   * The statement runs often with this very text, and one plan suits whatever parameters it is given (it is driven by
   * ids, row addresses or equalities on indexed columns): the server may keep its plan on each connection instead of
   * planning it at every call. Never for a statement whose best plan depends on a parameter's value (a range over an
   * indexed column, for one), which a plan kept for any value can get badly wrong.
   */
  keepPlan?: boolean;
}

export interface Queryable {
  query<T extends object = Record<string, unknown>>(
    sql: string,
    params?: readonly SqlParam[],
    options?: QueryOptions,
  ): Promise<T[]>;
}

export interface Transaction extends Queryable {
  /** Runs a script of several statements (no parameters) inside the transaction. */
  exec(sql: string): Promise<void>;
  /**
   * Runs `COPY ... FROM '/dev/blob'` with `data` as the file, when the database can load a client-side buffer that way
   * (embedded PGlite). The insert path uses it to hand vectors over in binary instead of as text to parse.
   */
  copyFrom?(sql: string, data: Uint8Array): Promise<void>;
}

export interface Database extends Queryable {
  readonly kind: 'embedded' | 'external';
  /**
   * Changes after every write to the memories table made through this handle when it is the database's only writer
   * (embedded PGlite: one process owns the data folder); undefined when other processes may write too (external
   * Postgres). The recall caches use it to skip re-reading when nothing changed.
   */
  readonly writeVersion: number | undefined;
  /** Runs `fn` in one transaction: everything it writes lands together or not at all. */
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  /** Runs a script of several statements (no parameters). */
  exec(sql: string): Promise<void>;
  /**
   * Calls `onNotify` for each NOTIFY on `channel`, and once whenever listening (re)starts (notifications sent while
   * nobody listened are lost); answers the function that stops listening. Absent on the embedded database: one process
   * owns it, so whatever it notifies about happened in this process, which can be told directly.
   */
  listen?(channel: string, onNotify: () => void): () => Promise<void>;
  /**
   * Runs `fn` on a connection of its own, each statement committing by itself and without the statement timeout: for
   * maintenance that cannot run inside a transaction and may take long (CREATE INDEX CONCURRENTLY). Session settings
   * and advisory locks last until `fn` ends.
   */
  session<T>(fn: (session: Queryable) => Promise<T>): Promise<T>;
  /** Pool statistics for /health and /metrics. */
  stats(): { total: number; idle: number; waiting: number };
  close(): Promise<void>;
}

/** Runs a trivial statement: resolves when the database answers, throws when it cannot be reached. */
export async function ping(q: Queryable): Promise<void> {
  await q.query('SELECT 1');
}

/**
 * True when a statement may change the memories table: it names the table and is not a read. A read is a query
 * (SELECT or WITH, possibly parenthesised, as the first branch of a UNION with a LIMIT must be; or a cursor declared
 * for one) with no data-changing keyword anywhere in it. Counting a read as a write is not harmless: each one made
 * every recall's bank index read the database again (the synchronisation query, itself parenthesised, counted as one).
 */
export function mayWriteMemories(sql: string): boolean {
  if (!/\bmemories\b/i.test(sql)) return false;
  const read = /^[\s(]*(SELECT|WITH|DECLARE)\b/i.test(sql) && !/\b(INSERT|UPDATE|DELETE|TRUNCATE|MERGE)\b/i.test(sql);
  return !read;
}
