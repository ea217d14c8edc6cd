import type { Database } from '../../db/database.js';
import { PeriodicJob } from '../../util/periodic-job.js';

/**
 * The size of the bank whose `banks` row is `b`, as the writes keep it (migrations 008 and 013): its folded total plus
 * the deltas not folded yet, an index range of its own.
 */
export const BANK_SIZE_SQL = `(b.memory_count + coalesce((SELECT sum(d.memories) FROM bank_statistics_deltas d
  WHERE d.tenant = b.tenant AND d.bank_id = b.bank_id AND d.term IS NULL), 0))`;

/** How often the keyword statistics' deltas are folded: readers sum the deltas written since, an index range each. */
const FOLD_EVERY_MS = 10_000;
/** The advisory lock that makes one folder run at a time across the engines of a database. */
const FOLD_LOCK = 'mnemos.bank_statistics_fold';

/**
 * Folds the keyword statistics' delta rows (migration 013) into the totals: every delta committed so far, of every
 * bank, in one transaction, so a term's additions and removals are always folded together and a total never goes
 * below what the rows hold. A term whose total reaches zero is deleted (a plaintext word must not stay behind under
 * encryption at rest). One folder runs at a time: another one answers 0 at once, or waits with `wait`. Answers how
 * many delta rows went.
 */
export function foldBankStatistics(db: Database, wait = false): Promise<number> {
  return db.transaction(async (tx) => {
    const lock = wait
      ? 'SELECT true AS held FROM (SELECT pg_advisory_xact_lock(hashtext($1)::bigint)) waited'
      : 'SELECT pg_try_advisory_xact_lock(hashtext($1)::bigint) AS held';
    const [taken] = await tx.query<{ held: boolean }>(lock, [FOLD_LOCK]);
    if (taken?.held !== true) return 0;
    const [folded] = await tx.query<{ rows: number; tenants: string[]; banks: string[]; terms: string[] }>(
      `WITH moved AS (DELETE FROM bank_statistics_deltas RETURNING tenant, bank_id, term, memories),
       summed AS (
         SELECT tenant, bank_id, term, sum(memories)::bigint AS delta FROM moved GROUP BY 1, 2, 3
       ),
       totals AS (
         INSERT INTO bank_term_counts AS t (tenant, bank_id, term, memories)
         SELECT tenant, bank_id, term, delta FROM summed WHERE term IS NOT NULL AND delta <> 0
         ON CONFLICT (tenant, bank_id, term) DO UPDATE SET memories = t.memories + EXCLUDED.memories
         RETURNING t.tenant, t.bank_id, t.term, t.memories
       ),
       sizes AS (
         UPDATE banks b SET memory_count = b.memory_count + s.delta
         FROM summed s WHERE s.term IS NULL AND s.delta <> 0 AND b.tenant = s.tenant AND b.bank_id = s.bank_id
       ),
       emptied AS (SELECT tenant, bank_id, term FROM totals WHERE memories <= 0)
       SELECT (SELECT count(*)::int FROM moved) AS rows, array(SELECT tenant FROM emptied) AS tenants,
         array(SELECT bank_id FROM emptied) AS banks, array(SELECT term FROM emptied) AS terms`,
    );
    if (folded && folded.terms.length > 0) {
      // A statement of its own: the totals the upsert wrote are visible only after it.
      await tx.query(
        `DELETE FROM bank_term_counts t USING unnest($1::text[], $2::text[], $3::text[]) AS e(tenant, bank_id, term)
         WHERE t.tenant = e.tenant AND t.bank_id = e.bank_id AND t.term = e.term AND t.memories <= 0`,
        [folded.tenants, folded.banks, folded.terms],
      );
    }
    return folded?.rows ?? 0;
  });
}

/** Folds the keyword statistics' deltas in the background, every `everyMs`: one fold of every bank per run. */
export class StatisticsFolder extends PeriodicJob {
  constructor(db: Database, onError: (error: unknown) => void, everyMs = FOLD_EVERY_MS) {
    super({
      // A fold takes every delta committed so far: nothing is left waiting for another step of the same run.
      step: async () => {
        await foldBankStatistics(db);
        return false;
      },
      everyMs,
      stepsPerRun: 1,
      runAtStart: false,
      onError,
    });
  }
}
