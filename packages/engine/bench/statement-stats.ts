import pg from 'pg';

/** One statement's figures between a reset and a read (`StatementStats.read`). */
export interface StatementFigure {
  /** The statement's text as pg_stat_statements normalises it (constants as $n), on one line. */
  query: string;
  calls: number;
  /** Execution time in all, and per call, in ms. */
  total_ms: number;
  mean_ms: number;
  /** Planning time in all, in ms: 0 unless the server runs with pg_stat_statements.track_planning on. */
  plan_ms: number;
  rows: number;
  /** Shared buffers read from the cache and from outside it. */
  shared_hit: number;
  shared_read: number;
}

/**
 * The execution time pg_stat_statements records for each statement run against one database, between a reset and a
 * read: what the database's time per recall is made of. Only the bench's database is reset (the server's other
 * databases keep their figures), and the reader's own statements are left out. Needs the server started with
 * `shared_preload_libraries = 'pg_stat_statements'` and the extension created in the database.
 */
export class StatementStats {
  private constructor(
    private readonly client: pg.Client,
    private readonly database: number,
  ) {}

  /** A reader for the database `url` names; refuses, with how to fix it, when pg_stat_statements is not usable. */
  static async open(url: string): Promise<StatementStats> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query('SELECT 1 FROM pg_stat_statements LIMIT 1');
    } catch (error) {
      await client.end();
      throw new Error(
        `pg_stat_statements cannot be read (${(error as Error).message}): start the server with ` +
          "shared_preload_libraries = 'pg_stat_statements' and run CREATE EXTENSION pg_stat_statements in the database",
      );
    }
    const db = await client.query<{ oid: number }>('SELECT oid FROM pg_database WHERE datname = current_database()');
    return new StatementStats(client, db.rows[0]!.oid);
  }

  /** Forgets this database's figures, so the next read holds only what runs from now on. */
  async reset(): Promise<void> {
    await this.client.query('SELECT pg_stat_statements_reset(0, $1, 0)', [this.database]);
  }

  /** Every statement run against the database since the reset but the reader's own, by total time, largest first. */
  async read(): Promise<StatementFigure[]> {
    const rows = await this.client.query<{
      query: string;
      calls: string;
      total_ms: number;
      plan_ms: number;
      rows: string;
      shared_hit: string;
      shared_read: string;
    }>(
      `SELECT query, calls, total_exec_time AS total_ms, total_plan_time AS plan_ms, rows, shared_blks_hit AS shared_hit,
              shared_blks_read AS shared_read
       FROM pg_stat_statements
       WHERE dbid = $1 AND query NOT LIKE '%pg_stat_statements%' AND query NOT LIKE '%pg_stat_activity%'
       ORDER BY total_exec_time DESC`,
      [this.database],
    );
    return rows.rows.map((r) => ({
      query: r.query.replace(/\s+/g, ' ').trim(),
      calls: Number(r.calls),
      total_ms: r.total_ms,
      mean_ms: r.total_ms / Math.max(1, Number(r.calls)),
      plan_ms: r.plan_ms,
      rows: Number(r.rows),
      shared_hit: Number(r.shared_hit),
      shared_read: Number(r.shared_read),
    }));
  }

  close(): Promise<void> {
    return this.client.end();
  }
}

/**
 * The statements' lines for a report: execution (and planning) time per recall, calls per recall, mean execution
 * time, shared blocks per call, and the statement's start.
 */
export function statementLines(figures: readonly StatementFigure[], recalls: number, width = 140): string[] {
  const total = figures.reduce((sum, f) => sum + f.total_ms, 0);
  const planned = figures.reduce((sum, f) => sum + f.plan_ms, 0);
  const lines = [
    `    pg_stat_statements: ${(total / recalls).toFixed(2)} ms of execution and ${(planned / recalls).toFixed(2)} ms ` +
      `of planning a recall over ${recalls} recalls (${figures.length} statements; planning is 0 unless ` +
      'pg_stat_statements.track_planning is on); per statement: execution ms a recall, planning ms a recall, calls a ' +
      'recall, mean execution ms, shared blocks a call',
  ];
  for (const f of figures.filter((f) => (f.total_ms + f.plan_ms) / recalls >= 0.01)) {
    lines.push(
      `      ${(f.total_ms / recalls).toFixed(2).padStart(7)} ${(f.plan_ms / recalls).toFixed(2).padStart(6)} ` +
        `${(f.calls / recalls).toFixed(2).padStart(6)} ${f.mean_ms.toFixed(3).padStart(8)} ` +
        `${((f.shared_hit + f.shared_read) / Math.max(1, f.calls)).toFixed(0).padStart(6)}  ${f.query.slice(0, width)}`,
    );
  }
  return lines;
}
