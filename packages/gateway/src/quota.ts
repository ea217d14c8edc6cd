// Monthly quotas without a database write per request. Each gateway instance leases blocks of units of a (project,
// month, metric) counter from the control plane, atomically and never more than the limit leaves, and charges requests
// against its lease in memory. A failed or refused request gives its units back to the local lease; successes are
// written to `usage_counters.used` in batches (every flush interval, before a usage report, at shutdown), and idle
// leases are returned. Invariant, under the counter's row lock: used + leased <= limit, so no instance can overshoot.
//
// Exactness at the limit: an instance that finds nothing left to lease first returns its own idle units, then asks the
// other instances holding leases on that counter (NOTIFY) to return their idle units and flush their counts, waits for
// their acknowledgement (bounded), and leases again; only then does it refuse. So a request is refused only when every
// unit is used or held by a request in flight, as with a per-request reservation. Blocks shrink near the limit (at most
// a quarter of what is left), so the last units are leased one by one.
//
// Crash: an instance that stops heart-beating for DEAD_AFTER is reclaimed by the others; the units it held are counted
// as used (it may have served them without reporting), so a crash can cost a project at most one block per metric but
// never lets it overshoot.
import { randomBytes } from 'node:crypto';
import type { Pool } from './db.js';
import { METRICS, periodOf, type Metric } from './scopes.js';
import { dayOfWrite } from './usage-daily.js';

export const QUOTA_CHANNEL = 'mnemos_quota';
const DEAD_AFTER_S = 60;
const IDLE_RETURN_MS = 30_000;
const RECLAIM_WAIT_MS = 1_000;

interface Counter {
  projectId: string;
  period: string;
  metric: Metric;
  /** Leased to this instance, not taken by any request. */
  available: number;
  /** Taken by requests in flight. */
  pending: number;
  /** Taken by requests that succeeded, not yet written to usage_counters.used. */
  consumed: number;
  /** Being written by a flush right now. */
  flushing: number;
  /** Writes in flight: a usage report waits for them, as their units are in neither `consumed` nor the table yet. */
  writes: Set<Promise<void>>;
  /** usage_counters.used as last seen by this instance. */
  base: number;
  /** Units wanted by requests waiting for a lease. */
  demand: number;
  refill: Promise<Refill> | undefined;
  lastUse: number;
  /**
   * Set once this counter reached its limit somewhere (a reclaim): from then on this instance leases exactly what its
   * waiting requests need and gives units of failed requests straight back, so no unit sits idle here while another
   * instance refuses.
   */
  tight: boolean;
}

interface Refill {
  /** True when the other instances were asked to give back idle units: nothing more can be had. */
  final: boolean;
  /** used + leased of the counter after this refill (everything counted or held somewhere). */
  allotted: number;
}

function counterKey(projectId: string, period: string, metric: Metric): string {
  return `${projectId}\u0000${period}\u0000${metric}`;
}

export type Reservation =
  | {
      ok: true;
      used: number;
      commit(): void;
      /** Counts `actual` of the reserved units (never more) and gives the rest back, in one step. */
      settle(actual: number): void;
      release(): void;
    }
  | { ok: false; used: number };

export class QuotaLedger {
  private instance = `gw_${randomBytes(9).toString('base64url')}`;
  private readonly counters = new Map<string, Counter>();
  private timer: NodeJS.Timeout | undefined;
  private ticks = 0;
  private ticking: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly pool: Pool,
    private readonly opts: { leaseUnits: number; flushMs: number },
  ) {}

  get instanceId(): string {
    return this.instance;
  }

  async start(): Promise<void> {
    await this.pool.query('INSERT INTO gateway_instances (id) VALUES ($1)', [this.instance]);
    this.timer = setInterval(() => {
      void this.tick();
    }, this.opts.flushMs);
    this.timer.unref();
  }

  /** Takes `amount` units for one request, or says why not (with the usage to report). */
  async reserve(projectId: string, metric: Metric, amount: number, limit: number, now: Date): Promise<Reservation> {
    const { period } = periodOf(now);
    const counter = this.counter(projectId, period, metric);
    for (;;) {
      if (counter.available >= amount) {
        counter.available -= amount;
        counter.pending += amount;
        let settled = false;
        return {
          ok: true,
          used: counter.base + counter.flushing + counter.consumed + counter.pending,
          commit: () => {
            if (settled) return;
            settled = true;
            counter.pending -= amount;
            counter.consumed += amount;
          },
          settle: (actual: number) => {
            if (settled) return;
            settled = true;
            const counted = Math.min(amount, Math.max(0, Math.floor(actual)));
            counter.pending -= amount;
            counter.consumed += counted;
            counter.available += amount - counted;
            if (counter.tight && counted < amount) void this.write(counter, true).catch(() => undefined);
          },
          release: () => {
            if (settled) return;
            settled = true;
            counter.pending -= amount;
            counter.available += amount;
            if (counter.tight) void this.write(counter, true).catch(() => undefined);
          },
        };
      }
      counter.demand += amount;
      let r: Refill;
      try {
        counter.refill ??= this.refill(counter, limit).finally(() => {
          counter.refill = undefined;
        });
        r = await counter.refill;
      } finally {
        counter.demand -= amount;
      }
      if (r.final && counter.available < amount)
        return { ok: false, used: Math.max(0, r.allotted - counter.available) };
    }
  }

  private counter(projectId: string, period: string, metric: Metric): Counter {
    const key = counterKey(projectId, period, metric);
    let c = this.counters.get(key);
    if (c === undefined) {
      c = {
        projectId,
        period,
        metric,
        available: 0,
        pending: 0,
        consumed: 0,
        flushing: 0,
        writes: new Set(),
        base: 0,
        demand: 0,
        refill: undefined,
        lastUse: 0,
        tight: false,
      };
      this.counters.set(key, c);
    }
    c.lastUse = Date.now();
    return c;
  }

  /** Writes this instance's counts of a project (before a usage report reads usage_counters). */
  async sync(projectId: string): Promise<void> {
    await Promise.all(
      [...this.counters.values()]
        .filter((c) => c.projectId === projectId)
        .map(async (c) => {
          await Promise.allSettled([...c.writes]);
          await this.write(c, false);
        }),
    );
  }

  /** A project's limits changed: give back idle units (a lowered limit must not be exceeded through old leases). */
  projectChanged(projectId: string): void {
    for (const c of this.counters.values()) {
      if (c.projectId !== projectId) continue;
      c.tight = false;
      void this.write(c, true).catch(() => undefined);
    }
  }

  /** Units taken by requests in flight, not yet counted or given back. */
  unitsInFlight(): number {
    let pending = 0;
    for (const c of this.counters.values()) pending += c.pending;
    return pending;
  }

  /** Writes counts and returns every idle unit now (tests, shutdown). */
  async flush(returnIdle = true): Promise<void> {
    await Promise.all([...this.counters.values()].map((c) => this.write(c, returnIdle)));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.ticking?.catch(() => undefined);
    await this.flush(true).catch(() => undefined);
    // Units of requests still in flight at shutdown were leased; count them (never overshoot).
    await this.pool
      .query(
        `WITH l AS (DELETE FROM quota_leases WHERE instance_id = $1 RETURNING project_id, period, metric, units)
       UPDATE usage_counters u SET used = u.used + l.units, leased = u.leased - l.units
       FROM l WHERE u.project_id = l.project_id AND u.period = l.period AND u.metric = l.metric`,
        [this.instance],
      )
      .catch(() => undefined);
    await this.pool.query('DELETE FROM gateway_instances WHERE id = $1', [this.instance]).catch(() => undefined);
  }

  /** Another instance asks for idle units of a counter back (payload: JSON {p, period, m}). */
  onReclaim(payload: string): void {
    let msg: { p?: unknown; period?: unknown; m?: unknown };
    try {
      msg = JSON.parse(payload) as typeof msg;
    } catch {
      return;
    }
    if (typeof msg.p !== 'string' || typeof msg.period !== 'string' || !METRICS.includes(msg.m as Metric)) return;
    // Every gateway hears the request; only one that holds units of this counter has anything to give back (a lease
    // is always taken through a counter here, so no counter means no lease).
    const c = this.counters.get(counterKey(msg.p, msg.period, msg.m as Metric));
    if (c === undefined) return;
    c.tight = true;
    void this.write(c, true, true).catch(() => undefined);
  }

  private async refill(c: Counter, limit: number): Promise<Refill> {
    const first = await this.lease(c, limit);
    if (first.granted > 0) return { final: false, allotted: first.allotted };
    // Nothing left to lease: give back our idle units, have the other instances give back theirs, and try once more.
    c.tight = true;
    await this.write(c, true);
    await this.reclaimOthers(c);
    const last = await this.lease(c, limit);
    return { final: true, allotted: last.allotted };
  }

  /** Leases a block within the limit (row lock on the counter); the units join c.available. */
  private async lease(c: Counter, limit: number): Promise<{ granted: number; allotted: number }> {
    const need = Math.max(1, c.demand - c.available);
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const cur = await client.query<{ used: string; leased: string }>(
        `INSERT INTO usage_counters AS u (project_id, period, metric) VALUES ($1, $2, $3)
         ON CONFLICT (project_id, period, metric) DO UPDATE SET used = u.used RETURNING used, leased`,
        [c.projectId, c.period, c.metric],
      );
      const used = Number(cur.rows[0]?.used ?? 0);
      const leased = Number(cur.rows[0]?.leased ?? 0);
      const left = Math.max(0, limit - used - leased);
      const granted = Math.min(
        left,
        c.tight ? need : Math.max(need, Math.min(this.opts.leaseUnits, Math.floor(left / 4))),
      );
      if (granted > 0) {
        await client.query(
          `WITH l AS (
             INSERT INTO quota_leases AS q (instance_id, project_id, period, metric, units) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (instance_id, project_id, period, metric) DO UPDATE SET units = q.units + EXCLUDED.units)
           UPDATE usage_counters SET leased = leased + $5 WHERE project_id = $2 AND period = $3 AND metric = $4`,
          [this.instance, c.projectId, c.period, c.metric, granted],
        );
      }
      await client.query('COMMIT');
      c.available += granted;
      c.base = Math.max(c.base, used);
      return { granted, allotted: used + leased + granted };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  /**
   * Writes counted units (used += consumed, leased -= consumed) and, when `returnIdle`, gives idle units back, in one
   * statement; `ack` also marks the lease row as answered for a reclaiming instance.
   */
  private write(c: Counter, returnIdle: boolean, ack = false): Promise<void> {
    const written = this.writeNow(c, returnIdle, ack);
    c.writes.add(written);
    written.finally(() => c.writes.delete(written)).catch(() => undefined);
    return written;
  }

  private async writeNow(c: Counter, returnIdle: boolean, ack: boolean): Promise<void> {
    const consumed = c.consumed;
    const idle = returnIdle ? c.available : 0;
    if (consumed === 0 && idle === 0 && !ack) return;
    c.consumed -= consumed;
    c.available -= idle;
    c.flushing += consumed;
    try {
      // The same units also count for the day they are written on (the console's daily chart).
      const res = await this.pool.query<{ used: string }>(
        `WITH l AS (
           UPDATE quota_leases SET units = units - $5 - $6${ack ? ', acked_at = clock_timestamp()' : ''}
           WHERE instance_id = $1 AND project_id = $2 AND period = $3 AND metric = $4),
         d AS (
           INSERT INTO usage_daily AS d (project_id, day, metric, used) SELECT $2, $7::date, $4, $8::bigint
           WHERE $8::bigint > 0
           ON CONFLICT (project_id, day, metric) DO UPDATE SET used = d.used + EXCLUDED.used)
         UPDATE usage_counters SET used = used + $5, leased = leased - $5 - $6
         WHERE project_id = $2 AND period = $3 AND metric = $4 RETURNING used`,
        [this.instance, c.projectId, c.period, c.metric, consumed, idle, dayOfWrite(c.period, new Date()), consumed],
      );
      c.base = Math.max(c.base, Number(res.rows[0]?.used ?? 0));
    } catch (err) {
      c.consumed += consumed;
      c.available += idle;
      throw err;
    } finally {
      c.flushing -= consumed;
    }
  }

  /** Asks the other instances holding units of this counter to return idle ones; waits (bounded) for their answers. */
  private async reclaimOthers(c: Counter): Promise<void> {
    const args = [this.instance, c.projectId, c.period, c.metric];
    const holders = await this.pool.query<{ n: string; at: Date }>(
      `SELECT count(*) AS n, clock_timestamp() AS at FROM quota_leases
       WHERE instance_id <> $1 AND project_id = $2 AND period = $3 AND metric = $4 AND units > 0`,
      args,
    );
    const since = holders.rows[0]?.at;
    if (Number(holders.rows[0]?.n ?? 0) === 0 || since === undefined) return;
    await this.pool.query('SELECT pg_notify($1, $2)', [
      QUOTA_CHANNEL,
      JSON.stringify({ p: c.projectId, period: c.period, m: c.metric }),
    ]);
    const deadline = Date.now() + RECLAIM_WAIT_MS;
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 5));
      const waiting = await this.pool.query<{ n: string }>(
        `SELECT count(*) AS n FROM quota_leases WHERE instance_id <> $1 AND project_id = $2 AND period = $3 AND metric = $4
         AND units > 0 AND (acked_at IS NULL OR acked_at < $5)`,
        [...args, since],
      );
      if (Number(waiting.rows[0]?.n ?? 0) === 0) return;
    }
  }

  private async tick(): Promise<void> {
    if (this.ticking !== undefined || this.closed) return;
    this.ticking = this.runTick()
      .catch(() => undefined)
      .finally(() => {
        this.ticking = undefined;
      });
    await this.ticking;
  }

  private async runTick(): Promise<void> {
    const now = Date.now();
    const { period } = periodOf(new Date(now));
    await Promise.all(
      [...this.counters.entries()].map(async ([key, c]) => {
        const stale = c.period !== period || now - c.lastUse > IDLE_RETURN_MS;
        await this.write(c, stale && c.pending === 0).catch(() => undefined);
        if (
          stale &&
          c.pending === 0 &&
          c.available === 0 &&
          c.consumed === 0 &&
          c.flushing === 0 &&
          c.refill === undefined
        ) {
          this.counters.delete(key);
        }
      }),
    );
    // Heartbeat; if the others declared this instance dead, they counted its leases as used: start afresh.
    const beat = await this.pool.query('UPDATE gateway_instances SET seen_at = now() WHERE id = $1', [this.instance]);
    if (beat.rowCount === 0) {
      this.counters.clear();
      this.instance = `gw_${randomBytes(9).toString('base64url')}`;
      await this.pool.query('INSERT INTO gateway_instances (id) VALUES ($1)', [this.instance]);
    }
    if (++this.ticks % 15 === 0) await this.reclaimDead();
  }

  /** Counts the leases of instances that stopped heart-beating as used, and forgets those instances. */
  private async reclaimDead(): Promise<void> {
    await this.pool.query(
      `WITH dead AS (DELETE FROM gateway_instances WHERE seen_at < now() - make_interval(secs => $1) RETURNING id),
       l AS (DELETE FROM quota_leases q USING dead WHERE q.instance_id = dead.id RETURNING q.project_id, q.period, q.metric, q.units),
       s AS (SELECT project_id, period, metric, sum(units) AS units FROM l GROUP BY project_id, period, metric)
       UPDATE usage_counters u SET used = u.used + s.units, leased = u.leased - s.units
       FROM s WHERE u.project_id = s.project_id AND u.period = s.period AND u.metric = s.metric`,
      [DEAD_AFTER_S],
    );
  }
}
