// The quota ledger's tables (quota.ts): the gateway instances that hold leases, their leases, and the counters the
// leases are taken from (usage_counters; usage_daily for the day written). Under a counter's row lock,
// used + leased <= limit.
import type { Pool } from './db.js';
import type { Metric } from './plans.js';

/** One (project, month, metric) counter. */
export interface CounterKey {
  projectId: string;
  period: string;
  metric: Metric;
}

export async function registerInstance(pool: Pool, instance: string): Promise<void> {
  await pool.query('INSERT INTO gateway_instances (id) VALUES ($1)', [instance]);
}

/** Marks the instance alive; false when the others declared it dead (and counted its leases as used). */
export async function heartbeat(pool: Pool, instance: string): Promise<boolean> {
  const beat = await pool.query('UPDATE gateway_instances SET seen_at = now() WHERE id = $1', [instance]);
  return beat.rowCount !== 0;
}

/** Counts every unit the instance still holds as used, drops its leases and forgets the instance (shutdown). */
export async function retireInstance(pool: Pool, instance: string): Promise<void> {
  await pool
    .query(
      `WITH l AS (DELETE FROM quota_leases WHERE instance_id = $1 RETURNING project_id, period, metric, units)
       UPDATE usage_counters u SET used = u.used + l.units, leased = u.leased - l.units
       FROM l WHERE u.project_id = l.project_id AND u.period = l.period AND u.metric = l.metric`,
      [instance],
    )
    .catch(() => undefined);
  await pool.query('DELETE FROM gateway_instances WHERE id = $1', [instance]).catch(() => undefined);
}

/**
 * Leases to the instance the units `grant` decides from the counter's used and leased units, under the counter's row
 * lock (one transaction).
 */
export async function leaseUnits(
  pool: Pool,
  instance: string,
  c: CounterKey,
  grant: (used: number, leased: number) => number,
): Promise<{ used: number; leased: number; granted: number }> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const cur = await client.query<{ used: string; leased: string }>(
      `INSERT INTO usage_counters AS u (project_id, period, metric) VALUES ($1, $2, $3)
       ON CONFLICT (project_id, period, metric) DO UPDATE SET used = u.used RETURNING used, leased`,
      [c.projectId, c.period, c.metric],
    );
    const used = Number(cur.rows[0]?.used ?? 0);
    const leased = Number(cur.rows[0]?.leased ?? 0);
    const granted = grant(used, leased);
    if (granted > 0) {
      await client.query(
        `WITH l AS (
           INSERT INTO quota_leases AS q (instance_id, project_id, period, metric, units) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (instance_id, project_id, period, metric) DO UPDATE SET units = q.units + EXCLUDED.units)
         UPDATE usage_counters SET leased = leased + $5 WHERE project_id = $2 AND period = $3 AND metric = $4`,
        [instance, c.projectId, c.period, c.metric, granted],
      );
    }
    await client.query('COMMIT');
    return { used, leased, granted };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

export interface CountsWrite {
  /** Units counted: used += consumed, leased -= consumed; they also count for `day`. */
  consumed: number;
  /** Idle units given back: leased -= idle. */
  idle: number;
  /** Marks the lease as answered for an instance that asked for units back. */
  ack: boolean;
  /** The day (`YYYY-MM-DD`) the consumed units count for. */
  day: string;
}

/** Writes an instance's counts of a counter in one statement; returns the counter's used units after it. */
export async function writeCounts(pool: Pool, instance: string, c: CounterKey, w: CountsWrite): Promise<number> {
  const res = await pool.query<{ used: string }>(
    `WITH l AS (
       UPDATE quota_leases SET units = units - $5 - $6${w.ack ? ', acked_at = clock_timestamp()' : ''}
       WHERE instance_id = $1 AND project_id = $2 AND period = $3 AND metric = $4),
     d AS (
       INSERT INTO usage_daily AS d (project_id, day, metric, used) SELECT $2, $7::date, $4, $8::bigint
       WHERE $8::bigint > 0
       ON CONFLICT (project_id, day, metric) DO UPDATE SET used = d.used + EXCLUDED.used)
     UPDATE usage_counters SET used = used + $5, leased = leased - $5 - $6
     WHERE project_id = $2 AND period = $3 AND metric = $4 RETURNING used`,
    [instance, c.projectId, c.period, c.metric, w.consumed, w.idle, w.day, w.consumed],
  );
  return Number(res.rows[0]?.used ?? 0);
}

/** How many other instances hold units of the counter, and the database's time of the count. */
export async function otherHolders(
  pool: Pool,
  instance: string,
  c: CounterKey,
): Promise<{ count: number; at: Date | undefined }> {
  const holders = await pool.query<{ n: string; at: Date }>(
    `SELECT count(*) AS n, clock_timestamp() AS at FROM quota_leases
     WHERE instance_id <> $1 AND project_id = $2 AND period = $3 AND metric = $4 AND units > 0`,
    [instance, c.projectId, c.period, c.metric],
  );
  return { count: Number(holders.rows[0]?.n ?? 0), at: holders.rows[0]?.at };
}

/** How many other instances still hold units of the counter without having answered since `since`. */
export async function unansweredHolders(pool: Pool, instance: string, c: CounterKey, since: Date): Promise<number> {
  const waiting = await pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM quota_leases WHERE instance_id <> $1 AND project_id = $2 AND period = $3 AND metric = $4
     AND units > 0 AND (acked_at IS NULL OR acked_at < $5)`,
    [instance, c.projectId, c.period, c.metric, since],
  );
  return Number(waiting.rows[0]?.n ?? 0);
}

/** Counts the leases of instances silent for `deadAfterSeconds` as used, and forgets those instances. */
export async function reclaimDeadInstances(pool: Pool, deadAfterSeconds: number): Promise<void> {
  await pool.query(
    `WITH dead AS (DELETE FROM gateway_instances WHERE seen_at < now() - make_interval(secs => $1) RETURNING id),
     l AS (DELETE FROM quota_leases q USING dead WHERE q.instance_id = dead.id RETURNING q.project_id, q.period, q.metric, q.units),
     s AS (SELECT project_id, period, metric, sum(units) AS units FROM l GROUP BY project_id, period, metric)
     UPDATE usage_counters u SET used = u.used + s.units, leased = u.leased - s.units
     FROM s WHERE u.project_id = s.project_id AND u.period = s.period AND u.metric = s.metric`,
    [deadAfterSeconds],
  );
}
