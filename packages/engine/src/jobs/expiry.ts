import type { Database } from '../db/database.js';
import { deleteMemories, expiredMemories } from '../memory/store.js';
import type { Clock } from '../util/clock.js';
import { PeriodicJob } from '../util/periodic-job.js';

/** How often the job looks for expired memories: an expired memory is deleted within this (and a run's time). */
export const EXPIRY_EVERY_MS = 30_000;
/** Memories deleted per step. */
const EXPIRY_STEP = 500;
/** Full steps per run at most. */
const STEPS_PER_RUN = 20;

/**
 * Deletes up to `limit` memories expired at `now`, soonest expired first, each bank's in one transaction through the
 * path a DELETE takes (memory/store.ts deleteMemories): the facts read from them go too, and a bank that keeps
 * history gets a tombstone version for each. Answers how many expired memories it found.
 */
export async function deleteExpired(db: Database, now: Date, limit = EXPIRY_STEP): Promise<number> {
  let found = 0;
  for (const bank of await expiredMemories(db, now, limit)) {
    await deleteMemories(db, bank.tenant, bank.bankId, bank.ids);
    found += bank.ids.length;
  }
  return found;
}

/**
 * The expiry job: deletes expired memories when the engine starts (what expired while it was stopped) and every
 * `everyMs` after. Reads leave an expired memory out from the instant it expires; the job frees its room.
 */
export class ExpiryJob extends PeriodicJob {
  constructor(db: Database, clock: Clock, onError: (error: unknown) => void, everyMs = EXPIRY_EVERY_MS) {
    super({
      step: async () => (await deleteExpired(db, clock())) >= EXPIRY_STEP,
      everyMs,
      stepsPerRun: STEPS_PER_RUN,
      runAtStart: true,
      onError,
    });
  }
}
