import type { Database } from '../db/database.js';
import { deleteMemories, expiredMemories } from '../memory/store.js';
import type { Clock } from '../util/clock.js';

/** How often the job looks for expired memories: an expired memory is deleted within this (and a run's time). */
export const EXPIRY_EVERY_MS = 30_000;
/** Memories deleted per step: each step's transaction stays small whatever piled up (a restart after a long stop). */
const EXPIRY_STEP = 500;
/** Steps per run at most; a larger backlog goes on at the next run. */
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
export class ExpiryJob {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly onError: (error: unknown) => void,
    private readonly everyMs = EXPIRY_EVERY_MS,
  ) {}

  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => this.tick(), this.everyMs);
    // The job never keeps the process alive.
    this.timer.unref();
    this.tick();
  }

  /** Stops the schedule and waits for a run in progress. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Waits for the run in progress, if any (a test's way to know the job has looked). */
  async idle(): Promise<void> {
    await this.running;
  }

  private tick(): void {
    if (this.running) return;
    this.running = this.run()
      .catch(this.onError)
      .finally(() => {
        this.running = undefined;
      });
  }

  private async run(): Promise<void> {
    for (let step = 0; step < STEPS_PER_RUN && this.timer !== undefined; step++) {
      if ((await deleteExpired(this.db, this.clock())) < EXPIRY_STEP) return;
    }
  }
}
