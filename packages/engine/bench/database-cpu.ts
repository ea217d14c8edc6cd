import pg from 'pg';
import { cpuTicks, TICKS_PER_SECOND } from './process-stats.js';

/** CPU time of the server processes serving one database, between two reads (`DatabaseCpu.since`). */
export interface CpuDelta {
  seconds: number;
  /** Server processes seen at the end (those gone meanwhile are not counted). */
  processes: number;
}

/**
 * The CPU time the PostgreSQL server processes serving one database have used, read from /proc: the work the database
 * does for the engines connected to it, whatever else the machine runs (wall time on a loaded machine says little).
 * Needs the server on this machine; pg_stat_statements needs the server started with it preloaded.
 */
export class DatabaseCpu {
  private constructor(private readonly client: pg.Client) {}

  /** A reader for the database `url` names, or undefined when its server's processes are not on this machine. */
  static async open(url: string): Promise<DatabaseCpu | undefined> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const reader = new DatabaseCpu(client);
    const own = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    if (cpuTicks(own.rows[0]!.pid) === undefined) {
      await client.end();
      return undefined;
    }
    return reader;
  }

  /** The CPU ticks of each server process of this database but the reader's own, now. */
  async read(): Promise<Map<number, number>> {
    const rows = await this.client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    const ticks = new Map<number, number>();
    for (const { pid } of rows.rows) {
      const t = cpuTicks(pid);
      if (t !== undefined) ticks.set(pid, t);
    }
    return ticks;
  }

  /** The CPU used since `before` (a `read()`): processes started since count whole. */
  async since(before: ReadonlyMap<number, number>): Promise<CpuDelta> {
    const now = await this.read();
    let ticks = 0;
    for (const [pid, t] of now) ticks += t - (before.get(pid) ?? 0);
    return { seconds: ticks / TICKS_PER_SECOND, processes: now.size };
  }

  close(): Promise<void> {
    return this.client.end();
  }
}
