import type { Queryable } from '../../db/database.js';

/** A bank's change log as a close left it (see migration 014). */
export interface ClosedLog {
  /** The bank's closed number: every change up to it has committed, and no later change takes it. */
  changeSeq: number;
  logId: string;
  prunedTo: number;
  /** Committed changes remain past the closed number: a writer of the open number was still in flight. */
  pending: boolean;
}

/**
 * Closes the bank's open change number before a copy is brought up to date, so the copy can move up to it: at once
 * when no writer of the bank is in flight, or after waiting up to `waitMs` for the ones that are (0: never waits).
 * Undefined when the bank does not exist.
 */
export async function closeBankNumber(
  db: Queryable,
  tenant: string,
  bankId: string,
  waitMs: number,
): Promise<ClosedLog | undefined> {
  const [row] = await db.query<{ closed: string; log_id: string; pruned_to: string; pending: boolean }>(
    'SELECT closed::text, log_id::text, pruned_to::text, pending FROM mnemos_bank_close($1, $2, $3::int)',
    [tenant, bankId, Math.trunc(waitMs)],
  );
  if (!row) return undefined;
  return { changeSeq: Number(row.closed), logId: row.log_id, prunedTo: Number(row.pruned_to), pending: row.pending };
}
