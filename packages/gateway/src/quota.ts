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
import { notify } from './notification-store.js';
import {
  heartbeat,
  leaseUnits,
  otherHolders,
  reclaimDeadInstances,
  registerInstance,
  retireInstance,
  unansweredHolders,
  writeCounts,
} from './quota-store.js';
import { METRICS, periodOf, type Metric } from './plans.js';
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
    await registerInstance(this.pool, this.instance);
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
    await retireInstance(this.pool, this.instance);
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
    const { used, leased, granted } = await leaseUnits(this.pool, this.instance, c, (counted, held) => {
      const left = Math.max(0, limit - counted - held);
      return Math.min(left, c.tight ? need : Math.max(need, Math.min(this.opts.leaseUnits, Math.floor(left / 4))));
    });
    c.available += granted;
    c.base = Math.max(c.base, used);
    return { granted, allotted: used + leased + granted };
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
      const used = await writeCounts(this.pool, this.instance, c, {
        consumed,
        idle,
        ack,
        day: dayOfWrite(c.period, new Date()),
      });
      c.base = Math.max(c.base, used);
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
    const holders = await otherHolders(this.pool, this.instance, c);
    const since = holders.at;
    if (holders.count === 0 || since === undefined) return;
    await notify(this.pool, QUOTA_CHANNEL, JSON.stringify({ p: c.projectId, period: c.period, m: c.metric }));
    const deadline = Date.now() + RECLAIM_WAIT_MS;
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 5));
      if ((await unansweredHolders(this.pool, this.instance, c, since)) === 0) return;
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
    if (!(await heartbeat(this.pool, this.instance))) {
      this.counters.clear();
      this.instance = `gw_${randomBytes(9).toString('base64url')}`;
      await registerInstance(this.pool, this.instance);
    }
    if (++this.ticks % 15 === 0) await this.reclaimDead();
  }

  /** Counts the leases of instances that stopped heart-beating as used, and forgets those instances. */
  private async reclaimDead(): Promise<void> {
    await reclaimDeadInstances(this.pool, DEAD_AFTER_S);
  }
}
