import type { Database } from '../../db/database.js';
import { PeriodicJob } from '../../util/periodic-job.js';

/**
 * How long a tombstone is kept. An engine that brings its copy of a bank up to date within this time reads the bank's
 * deletions from the tombstones; one further behind lists the bank's ids instead (vectors/vector-cache.ts), which costs more
 * but is still correct, so this only trades table space for how often that happens.
 */
export const TOMBSTONE_RETENTION_MS = 15 * 60_000;
const PRUNE_EVERY_MS = 60_000;
/** Tombstones removed per step (one transaction). */
const PRUNE_STEP = 1_000;
/** Full steps per run at most. */
const STEPS_PER_RUN = 20;

/**
 * Removes up to `limit` tombstones older than `olderThanMs` (by the database's clock), oldest first, of changes under
 * a closed number (migration 014; a bank's open number is closed first when no writer holds it), so the mark never
 * passes the number a copy can have, and raises each affected bank's `tombstones_pruned_to` to the newest change
 * number removed, in the same transaction: a reader sees both or neither, and any copy older than that mark knows it
 * may have missed deletions. The banks' rows are locked (in key order) before the tombstones are touched, the order
 * every writer of a bank follows. Answers how many went.
 */
export function pruneTombstones(db: Database, olderThanMs: number, limit = PRUNE_STEP): Promise<number> {
  return db.transaction(async (tx) => {
    // Old tombstones under a bank's open number (no reader closed it since) are pruned once it is closed here.
    await tx.query(
      `SELECT c.closed FROM (SELECT DISTINCT t.tenant, t.bank_id FROM memory_tombstones t
         JOIN banks b ON b.tenant = t.tenant AND b.bank_id = t.bank_id AND t.change_seq > b.change_seq
         WHERE t.deleted_at < now() - ($1::float8 * interval '1 millisecond')) open,
       mnemos_bank_close(open.tenant, open.bank_id, 0) c`,
      [olderThanMs],
    );
    const doomed = await tx.query<{ tenant: string; bank_id: string; id: string; change_seq: string }>(
      `SELECT t.tenant, t.bank_id, t.id::text AS id, t.change_seq::text AS change_seq FROM memory_tombstones t
       JOIN banks b ON b.tenant = t.tenant AND b.bank_id = t.bank_id AND t.change_seq <= b.change_seq
       WHERE t.deleted_at < now() - ($1::float8 * interval '1 millisecond') ORDER BY t.deleted_at LIMIT $2::int`,
      [olderThanMs, limit],
    );
    if (doomed.length === 0) return 0;
    const newest = new Map<string, { tenant: string; bankId: string; top: number }>();
    for (const t of doomed) {
      const key = `${t.tenant}\u0000${t.bank_id}`;
      const top = Number(t.change_seq);
      const seen = newest.get(key);
      if (!seen || seen.top < top) newest.set(key, { tenant: t.tenant, bankId: t.bank_id, top });
    }
    const banks = [...newest.values()];
    const bankKeys = [banks.map((b) => b.tenant), banks.map((b) => b.bankId)];
    await tx.query(
      `SELECT 1 FROM banks WHERE (tenant, bank_id) IN (SELECT * FROM unnest($1::text[], $2::text[]))
       ORDER BY tenant, bank_id FOR UPDATE`,
      bankKeys,
    );
    await tx.query(
      `UPDATE banks b SET tombstones_pruned_to = GREATEST(b.tombstones_pruned_to, d.top)
       FROM unnest($1::text[], $2::text[], $3::bigint[]) AS d(tenant, bank_id, top)
       WHERE b.tenant = d.tenant AND b.bank_id = d.bank_id`,
      [...bankKeys, banks.map((b) => b.top)],
    );
    const gone = await tx.query<{ id: string }>(
      `DELETE FROM memory_tombstones t USING unnest($1::text[], $2::text[], $3::uuid[]) AS d(tenant, bank_id, id)
       WHERE t.tenant = d.tenant AND t.bank_id = d.bank_id AND t.id = d.id RETURNING t.id`,
      [doomed.map((t) => t.tenant), doomed.map((t) => t.bank_id), doomed.map((t) => t.id)],
    );
    return gone.length;
  });
}

export interface PruneSchedule {
  everyMs: number;
  retentionMs: number;
}

/** Prunes tombstones once a minute in the background, a bounded number of steps per run. */
export class TombstonePruner extends PeriodicJob {
  constructor(
    db: Database,
    onError: (error: unknown) => void,
    schedule: PruneSchedule = { everyMs: PRUNE_EVERY_MS, retentionMs: TOMBSTONE_RETENTION_MS },
  ) {
    super({
      step: async () => (await pruneTombstones(db, schedule.retentionMs)) >= PRUNE_STEP,
      everyMs: schedule.everyMs,
      stepsPerRun: STEPS_PER_RUN,
      runAtStart: false,
      onError,
    });
  }
}
