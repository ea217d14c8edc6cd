import { randomUUID } from 'node:crypto';
import type { Database, Queryable, Transaction } from '../db/database.js';
import type { Logger } from '../log.js';
import type { Partition } from '../memory/types.js';
import { addBankUsage } from '../memory/bank-store.js';
import { errorMessage } from '../util/error-message.js';

/**
 * A durable job queue in Postgres (embedded or external): jobs survive restarts, are retried with backoff, and are
 * claimed with FOR UPDATE SKIP LOCKED under a lease, so several engines can share one database. A job completes in
 * the same transaction that writes its results, guarded by its lease token: a job whose worker died is taken over
 * when its lease runs out, and at most one run of it ever commits.
 */

export interface ClaimedJob {
  id: string;
  operationId: string;
  tenant: string;
  bankId: string;
  space: string;
  kind: string;
  memoryId: string | null;
  payload: Record<string, unknown>;
  attempts: number;
  maxAttempts: number;
  lease: string;
}

export interface JobTokens {
  input: number;
  output: number;
}

export interface JobContext {
  signal: AbortSignal;
  /** Writes the job's results and marks it done, atomically; throws LeaseLostError if another worker owns it now. */
  complete<T>(write: (tx: Transaction) => Promise<T>, result: Record<string, unknown>, tokens?: JobTokens): Promise<T>;
  /** The same inside a transaction the handler already runs (its writes commit with the completion). */
  completeWithin(tx: Queryable, result: Record<string, unknown>, tokens?: JobTokens): Promise<void>;
  readonly completed: boolean;
}

/** A failure the handler reports: permanent ones are not retried, and tokens spent are still recorded. */
export class JobFailure extends Error {
  override readonly name = 'JobFailure';
  constructor(
    message: string,
    readonly permanent: boolean,
    readonly tokens: JobTokens = { input: 0, output: 0 },
  ) {
    super(message);
  }
}

export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
}

export type JobHandler = (job: ClaimedJob, ctx: JobContext) => Promise<void>;

export interface NewJob {
  kind: string;
  memoryId?: string | null;
  payload?: Record<string, unknown>;
  maxAttempts?: number;
}

export interface QueueOptions {
  /** Jobs run at once by this engine. */
  concurrency: number;
  /**
   * Idle poll interval: the fallback for work nobody woke the queue for. New jobs enqueued by this process wake it at
   * once, jobs enqueued by other engines through NOTIFY (where the database delivers it), retries by a timer.
   */
  pollMs?: number;
  /** How long a claimed job is reserved; renewed while it runs. */
  leaseMs?: number;
  /** The database belongs to this process alone (embedded): jobs left running by a dead process are reclaimed at once. */
  exclusive?: boolean;
  onDepth?: (depth: number) => void;
}

interface JobRow {
  id: string;
  operation_id: string;
  tenant: string;
  bank_id: string;
  space: string;
  kind: string;
  memory_id: string | null;
  payload: Record<string, unknown> | null;
  attempts: number;
  max_attempts: number;
}

/** The channel an enqueue NOTIFYs (in its transaction, so listeners hear it once the jobs are committed). */
export const JOBS_CHANNEL = 'mnemos_jobs';

/** A retry's wake comes this much after its run_after, so the claim that follows finds it due. */
const RETRY_WAKE_MARGIN_MS = 50;

export class JobQueue {
  private readonly handlers = new Map<string, JobHandler>();
  private readonly running = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private stopped = true;

  /** Read through a call: `stop()` sets the flag while the loop awaits, which the type checker cannot see. */
  private isStopped(): boolean {
    return this.stopped;
  }
  private wakeUp: (() => void) | undefined;
  private loopDone: Promise<void> = Promise.resolve();
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private stopListening: (() => Promise<void>) | undefined;
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  /** The last claim failed (the database out of reach): the next failure is not logged again. */
  private claimFailing = false;

  constructor(
    private readonly db: Database,
    private readonly log: Logger,
    private readonly options: QueueOptions,
  ) {
    this.pollMs = options.pollMs ?? 1000;
    this.leaseMs = options.leaseMs ?? 120_000;
  }

  get busy(): number {
    return this.running.size;
  }

  register(kind: string, handler: JobHandler): void {
    this.handlers.set(kind, handler);
  }

  /** Creates an operation (if new) and its jobs inside the caller's transaction. */
  async enqueue(
    tx: Queryable,
    operationId: string,
    partition: Partition,
    kind: string,
    jobs: NewJob[],
    itemsCount = 0,
  ): Promise<void> {
    await tx.query(
      `INSERT INTO operations (id, tenant, bank_id, space, kind, items_count) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (tenant, id) DO UPDATE SET updated_at = now()`,
      [operationId, partition.tenant, partition.bankId, partition.space, kind, itemsCount],
    );
    for (const j of jobs) {
      await tx.query(
        `INSERT INTO jobs (id, operation_id, tenant, bank_id, space, kind, memory_id, payload, max_attempts)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9)`,
        [
          randomUUID(),
          operationId,
          partition.tenant,
          partition.bankId,
          partition.space,
          j.kind,
          j.memoryId ?? null,
          JSON.stringify(j.payload ?? {}),
          j.maxAttempts ?? 3,
        ],
      );
    }
    // Delivered at commit to every engine listening on this database (external Postgres), which claims at once.
    if (jobs.length > 0) await tx.query('SELECT pg_notify($1, $2)', [JOBS_CHANNEL, kind]);
  }

  /** Nudges the dispatcher (call after committing new jobs). */
  wake(): void {
    this.nudged = true;
    this.signal();
  }

  private nudged = false;

  /** A signal came (a job finished, or an enqueue) since the loop last started claiming. */
  private signalled = false;

  private signal(): void {
    this.signalled = true;
    const w = this.wakeUp;
    this.wakeUp = undefined;
    w?.();
  }

  async start(): Promise<void> {
    if (this.options.exclusive) {
      // Only this process uses the database: whatever was running belonged to a process that died.
      await this.db.query(
        `UPDATE jobs SET status = 'queued', lease = NULL, locked_until = NULL, updated_at = now() WHERE status = 'running'`,
      );
    }
    this.stopped = false;
    this.stopListening = this.db.listen?.(JOBS_CHANNEL, () => this.signal());
    this.loopDone = this.loop();
  }

  /** Stops claiming, cancels running jobs (they go back to the queue untouched) and waits for them to settle. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
    await this.stopListening?.();
    this.signal();
    await this.loopDone;
    for (const { controller } of this.running.values()) controller.abort();
    await Promise.all([...this.running.values()].map((r) => r.done));
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      // An enqueue's wake whose jobs were not visible yet (not committed) gets one quick second look.
      const nudged = this.nudged;
      this.nudged = false;
      this.signalled = false;
      let claimed = 0;
      const free = this.options.concurrency - this.running.size;
      const wasFailing = this.claimFailing;
      try {
        // One query claims a job for every free slot.
        if (free > 0) {
          const jobs = await this.claim(free);
          claimed = jobs.length;
          for (const job of jobs) this.launch(job);
        }
        if (this.options.onDepth) await this.reportDepth();
        this.claimFailing = false;
      } catch (error) {
        if (!this.isStopped() && !wasFailing) {
          this.log.warn(`job queue: claiming failed (${errorMessage(error)}); retrying every ${this.pollMs} ms`);
        }
        this.claimFailing = true;
      }
      if (this.isStopped()) break;
      const delay = this.nextDelay(nudged, claimed);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** How long the loop waits (unless woken) before it claims again. */
  private nextDelay(nudged: boolean, claimed: number): number {
    // A signal that came while claiming (a job finished, an enqueue), when no one was waiting for it: look again now.
    if (this.signalled) return 0;
    // A full house waits for a slot (a finishing job signals); otherwise poll, or be woken by an enqueue.
    if (this.running.size >= this.options.concurrency) return this.pollMs;
    // An enqueue from inside a transaction can wake the loop before its commit (external databases): a wake that found
    // nothing looks again shortly.
    if (nudged && claimed === 0) return Math.min(this.pollMs, 50);
    return this.pollMs;
  }

  private lastDepthAt = 0;

  private async reportDepth(): Promise<void> {
    // At most once a second: the gauge is for dashboards, and the count competes with real work for the database.
    if (Date.now() - this.lastDepthAt < 1000) return;
    this.lastDepthAt = Date.now();
    const [row] = await this.db.query<{ n: string | number }>(
      `SELECT count(*) AS n FROM jobs WHERE status IN ('queued', 'running')`,
    );
    this.options.onDepth?.(Number(row?.n ?? 0));
  }

  /**
   * Claims up to `limit` runnable jobs in one statement, each under a lease token of its own. The queue is shared by
   * every tenant, so this is the one statement that spans tenants; the picked rows are materialised once, so the
   * update takes exactly the rows it locked.
   */
  private async claim(limit: number): Promise<ClaimedJob[]> {
    const kinds = [...this.handlers.keys()];
    if (kinds.length === 0) return [];
    const rows = await this.db.query<JobRow & { lease: string }>(
      `WITH picked AS MATERIALIZED (
         SELECT tenant, id FROM jobs
         WHERE kind = ANY($2::text[]) AND ((status = 'queued' AND run_after <= now()) OR (status = 'running' AND locked_until < now()))
         ORDER BY run_after, created_at LIMIT $3 FOR UPDATE SKIP LOCKED)
       UPDATE jobs j SET status = 'running', attempts = attempts + 1, lease = gen_random_uuid(),
         locked_until = now() + ($1::integer * interval '1 millisecond'), updated_at = now()
       FROM picked WHERE j.tenant = picked.tenant AND j.id = picked.id
       RETURNING j.id, j.operation_id, j.tenant, j.bank_id, j.space, j.kind, j.memory_id, j.payload, j.attempts,
         j.max_attempts, j.lease`,
      [this.leaseMs, kinds, limit],
    );
    // They all start at once, so the order RETURNING gives them in does not matter.
    return rows.map((r) => ({
      id: r.id,
      operationId: r.operation_id,
      tenant: r.tenant,
      bankId: r.bank_id,
      space: r.space,
      kind: r.kind,
      memoryId: r.memory_id,
      payload: r.payload ?? {},
      attempts: r.attempts,
      maxAttempts: r.max_attempts,
      lease: r.lease,
    }));
  }

  private launch(job: ClaimedJob): void {
    const controller = new AbortController();
    // Registered before the handler starts (execute runs synchronously up to its first await), so `busy` counts it.
    const entry: { controller: AbortController; done: Promise<void> } = { controller, done: Promise.resolve() };
    this.running.set(job.id, entry);
    entry.done = this.execute(job, controller.signal).finally(() => {
      this.running.delete(job.id);
      this.signal();
    });
  }

  private async execute(job: ClaimedJob, signal: AbortSignal): Promise<void> {
    const heartbeat = setInterval(
      () => {
        this.db
          .query(
            `UPDATE jobs SET locked_until = now() + ($3::integer * interval '1 millisecond')
             WHERE tenant = $4 AND id = $1 AND lease = $2`,
            [job.id, job.lease, this.leaseMs, job.tenant],
          )
          .catch(() => undefined);
      },
      Math.max(1000, this.leaseMs / 3),
    );
    // Set by the context's callbacks; an object, so the type checker does not take it as always false.
    const state = { completed: false };
    const finish = async (tx: Queryable, result: Record<string, unknown>, tokens: JobTokens) => {
      const owned = await tx.query(
        `UPDATE jobs SET status = 'succeeded', result = $3::jsonb, tokens_input = tokens_input + $4,
           tokens_output = tokens_output + $5, lease = NULL, locked_until = NULL, last_error = NULL,
           finished_at = now(), updated_at = now()
         WHERE tenant = $6 AND id = $1 AND lease = $2 AND status = 'running' RETURNING id`,
        [job.id, job.lease, JSON.stringify(result), tokens.input, tokens.output, job.tenant],
      );
      if (owned.length === 0) throw new LeaseLostError(`job ${job.id} is no longer ours`);
    };
    const ctx: JobContext = {
      signal,
      complete: async (write, result, tokens = { input: 0, output: 0 }) => {
        const value = await this.db.transaction(async (tx) => {
          await finish(tx, result, tokens);
          return write(tx);
        });
        state.completed = true;
        return value;
      },
      completeWithin: async (tx, result, tokens = { input: 0, output: 0 }) => {
        await finish(tx, result, tokens);
        state.completed = true;
      },
      get completed() {
        return state.completed;
      },
    };
    try {
      const handler = this.handlers.get(job.kind);
      if (!handler) throw new JobFailure(`no handler for job kind ${job.kind}`, true);
      if (job.attempts > job.maxAttempts) {
        throw new JobFailure(`the job was interrupted ${job.attempts - 1} times (its worker stopped mid-job)`, true);
      }
      await handler(job, ctx);
      if (!state.completed) await ctx.complete(async () => undefined, {});
    } catch (error) {
      if (error instanceof LeaseLostError) return;
      await this.failed(job, error, signal.aborted).catch((e: unknown) =>
        this.log.warn(`job queue: could not record the failure of job ${job.id} (${errorMessage(e)})`),
      );
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** Wakes the loop once `ms` from now (a retry falls due), without holding the process open. */
  private wakeAfter(ms: number): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      this.signal();
    }, ms);
    timer.unref();
    this.retryTimers.add(timer);
  }

  private async failed(job: ClaimedJob, error: unknown, aborted: boolean): Promise<void> {
    const tokens = error instanceof JobFailure ? error.tokens : { input: 0, output: 0 };
    if (aborted) {
      // Shutting down: give the job back without counting the attempt.
      await this.db.query(
        `UPDATE jobs SET status = 'queued', attempts = GREATEST(attempts - 1, 0), lease = NULL, locked_until = NULL,
           tokens_input = tokens_input + $3, tokens_output = tokens_output + $4, updated_at = now()
         WHERE tenant = $5 AND id = $1 AND lease = $2`,
        [job.id, job.lease, tokens.input, tokens.output, job.tenant],
      );
      return;
    }
    if (tokens.input + tokens.output > 0)
      await addBankUsage(this.db, job.tenant, job.bankId, tokens.input, tokens.output);
    const message = errorMessage(error);
    const permanent = error instanceof JobFailure ? error.permanent : false;
    const retry = !permanent && job.attempts < job.maxAttempts;
    const delayMs = Math.min(60_000, 1000 * 2 ** (job.attempts - 1));
    await this.db.query(
      `UPDATE jobs SET status = $3, last_error = $4, lease = NULL, locked_until = NULL,
         run_after = now() + ($5::integer * interval '1 millisecond'),
         tokens_input = tokens_input + $6, tokens_output = tokens_output + $7,
         finished_at = CASE WHEN $3 = 'failed' THEN now() ELSE NULL END, updated_at = now()
       WHERE tenant = $8 AND id = $1 AND lease = $2`,
      [
        job.id,
        job.lease,
        retry ? 'queued' : 'failed',
        message.slice(0, 2000),
        delayMs,
        tokens.input,
        tokens.output,
        job.tenant,
      ],
    );
    if (retry) this.wakeAfter(delayMs + RETRY_WAKE_MARGIN_MS);
    this.log.warn(
      `job ${job.kind} ${job.id} ${retry ? `failed (attempt ${job.attempts}), will retry` : 'failed'}: ${message}`,
    );
  }
}

/** Empties a job's payload: once its content lives in memories, a copy kept in the job would survive a hard delete. */
export async function clearJobPayload(q: Queryable, tenant: string, jobId: string): Promise<void> {
  await q.query(`UPDATE jobs SET payload = '{}'::jsonb WHERE tenant = $1 AND id = $2`, [tenant, jobId]);
}
