/**
 * Planner statistics for the embedded database. PGlite runs no autovacuum daemon (and keeps no table activity
 * counters), so without this the tables are never analyzed: the planner works from empty statistics and picks poor
 * plans as the data grows (the retain-time duplicate check then scans a whole bank through the wrong index). This
 * stands in for autovacuum's analyze: a table is analyzed when it was
 * never analyzed, or when its file grew by a tenth (and a few pages) since it last was. A real server's autovacuum
 * does this for external databases.
 */

/** The tables that grow with use. */
const TABLES = ['memories', 'memory_tombstones', 'jobs', 'operations', 'banks'];
const GROWTH = 0.1;
const SLACK_PAGES = 8;

export interface RawSql {
  query<T extends object>(sql: string): Promise<T[]>;
}

/**
 * Analyzes the tables whose statistics are missing or stale; returns the ones it analyzed. A partitioned table's rows
 * live in its partitions (`memories`, migration 018): a stale partition has its whole table analyzed, which gathers the
 * statistics of the table and of each partition.
 */
export async function refreshStatistics(sql: RawSql): Promise<string[]> {
  const rows = await sql.query<{ analyzed: string; relpages: number; reltuples: number; pages: number }>(
    `SELECT COALESCE(p.relname, c.relname) AS analyzed, c.relpages, c.reltuples,
       (pg_relation_size(c.oid) / current_setting('block_size')::int)::int AS pages
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_inherits i ON i.inhrelid = c.oid LEFT JOIN pg_class p ON p.oid = i.inhparent
     WHERE n.nspname = 'public' AND c.relkind = 'r'
       AND COALESCE(p.relname, c.relname) IN (${TABLES.map((t) => `'${t}'`).join(', ')})`,
  );
  const stale = new Set(
    rows
      .filter((r) => r.pages > 0 && (r.reltuples < 0 || r.pages > r.relpages * (1 + GROWTH) + SLACK_PAGES))
      .map((r) => r.analyzed),
  );
  for (const table of stale) await sql.query(`ANALYZE ${table}`);
  return [...stale];
}

/**
 * Checks after `intervalMs`, then every `intervalMs` while writes happen (`writes()` changes); the timer never keeps
 * the process alive.
 * Returns a stop function that waits for a check in progress.
 */
export function keepStatisticsFresh(sql: RawSql, writes: () => number, intervalMs: number): () => Promise<void> {
  // The first tick always checks (a database reopened with tables never analyzed).
  let seen = Number.NaN;
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    const now = writes();
    if (now === seen || running) return;
    seen = now;
    // A failed check costs only plan quality until the next one (the database is closing, or busy): nothing to report.
    running = refreshStatistics(sql)
      .catch(() => undefined)
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
