import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Database, Queryable } from '../db/database.js';
import { MasterKey } from './envelope.js';

/**
 * The engines connected to an external database, each with the fingerprint of the master key it serves with, so that
 * `mnemos rotate-key` can refuse to retire a key an engine still uses (and name that engine). Each engine registers at
 * start, refreshes its heartbeat while it runs and removes its entry when it stops; one that stopped without removing
 * it (a crash, a lost connection) counts until its heartbeat is older than the staleness window. Times are the
 * database server's, so the engines' and the command's clocks never need to agree.
 */

/** How often a connected engine refreshes its heartbeat. */
export const HEARTBEAT_MS = 10_000;
/** An engine whose heartbeat is older than this is taken for gone: several heartbeats in a row went missing. */
export const STALE_AFTER_MS = 60_000;
/** Entries this old are removed when an engine registers: nothing has run behind them for a day. */
const FORGOTTEN_AFTER = '1 day';

/** An engine as the rotation names it. */
export interface ConnectedEngine {
  host: string;
  pid: number;
  startedAt: Date;
  /** Whole seconds since its last heartbeat, by the database's clock. */
  silentSeconds: number;
}

export interface RegistrationOptions {
  heartbeatMs?: number;
  /** Hears the first heartbeat that failed after one that worked (the database out of reach); the next tries again. */
  onError?: (error: unknown) => void;
}

/** This engine's entry: written at start, refreshed every heartbeat, removed by `close`. */
export class EngineRegistration {
  private readonly timer: NodeJS.Timeout;
  private beating: Promise<void> = Promise.resolve();
  private closed = false;
  private failing = false;

  private constructor(
    private readonly db: Database,
    private readonly id: string,
    private readonly fingerprint: string | null,
    heartbeatMs: number,
    private readonly onError: (error: unknown) => void,
  ) {
    this.timer = setInterval(() => this.beat(), heartbeatMs);
    this.timer.unref();
  }

  /**
   * Registers this process with the fingerprint of its master key (none without encryption). An engine registers
   * before it verifies its key against the database: a rotation that runs in between sees it and refuses, and one that
   * ran before makes the verification fail.
   */
  static async register(
    db: Database,
    masterKey: Buffer | undefined,
    options: RegistrationOptions = {},
  ): Promise<EngineRegistration> {
    const id = randomUUID();
    const fingerprint = masterKey === undefined ? null : new MasterKey(masterKey).fingerprintHex;
    await db.query(`DELETE FROM connected_engines WHERE heartbeat_at < now() - interval '${FORGOTTEN_AFTER}'`);
    await upsert(db, id, fingerprint);
    return new EngineRegistration(db, id, fingerprint, options.heartbeatMs ?? HEARTBEAT_MS, options.onError ?? noop);
  }

  /** Stops the heartbeat and removes the entry (a failure leaves it to go stale). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.beating;
    await this.db.query('DELETE FROM connected_engines WHERE id = $1', [this.id]).catch(() => undefined);
  }

  private beat(): void {
    // One heartbeat at a time: a slow database delays the next instead of piling them up.
    this.beating = this.beating.then(async () => {
      if (this.closed) return;
      // An upsert, so an entry removed meanwhile (taken for gone during a long outage) comes back.
      await upsert(this.db, this.id, this.fingerprint).then(
        () => {
          this.failing = false;
        },
        (error: unknown) => {
          if (!this.failing) this.onError(error);
          this.failing = true;
        },
      );
    });
  }
}

async function upsert(q: Queryable, id: string, fingerprint: string | null): Promise<void> {
  await q.query(
    `INSERT INTO connected_engines (id, host, pid, key_fingerprint) VALUES ($1, $2, $3, $4)
     ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`,
    [id, hostname(), process.pid, fingerprint],
  );
}

/**
 * The engines heard from within `staleAfterMs` that serve with another master key than `fingerprint` (or none). The
 * window ends when the statement runs, not when its transaction began (it may have waited for the rotation's lock).
 */
export async function enginesNotOnKey(
  q: Queryable,
  fingerprint: string,
  staleAfterMs = STALE_AFTER_MS,
): Promise<ConnectedEngine[]> {
  const rows = await q.query<{ host: string; pid: number; started_at: Date; silent: number | string }>(
    `SELECT host, pid, started_at, floor(extract(epoch FROM clock_timestamp() - heartbeat_at)) AS silent
     FROM connected_engines
     WHERE key_fingerprint IS DISTINCT FROM $1 AND heartbeat_at > clock_timestamp() - $2 * interval '1 millisecond'
     ORDER BY started_at, host, pid`,
    [fingerprint, staleAfterMs],
  );
  return rows.map((r) => ({ host: r.host, pid: r.pid, startedAt: r.started_at, silentSeconds: Number(r.silent) }));
}

function noop(): void {}
