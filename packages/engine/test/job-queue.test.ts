// The job queue on its own (real embedded database): an enqueue wakes idle workers at once (the poll interval here is
// an hour, so a test that depended on polling would hang), one claim takes a job for every free slot, two queues on one
// database run every job exactly once, a worker that lost its lease cannot complete the job, and a failed job is
// retried when its backoff ends (its own timer wakes the queue).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Database } from '../src/db/database.js';
import { openDatabase } from '../src/db/open.js';
import { JobQueue, LeaseLostError, type ClaimedJob, type JobContext } from '../src/jobs/queue.js';
import { tempHome } from './helpers/engine.js';

const home = tempHome('mnemos-jobs-');
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
const HOUR = 3_600_000;
let db: Database;
const queues: JobQueue[] = [];

after(async () => {
  for (const q of queues) await q.stop();
  await db?.close();
  home.remove();
});

async function database(): Promise<Database> {
  db ??= (await openDatabase({ home: home.path, databaseUrl: undefined })).db;
  return db;
}

function queue(
  d: Database,
  concurrency: number,
  kind: string,
  handler: (job: ClaimedJob, ctx: JobContext) => Promise<void>,
): JobQueue {
  const q = new JobQueue(d, log, { concurrency, pollMs: HOUR });
  q.register(kind, handler);
  queues.push(q);
  return q;
}

const partition = { tenant: 'default', bankId: 'jobs-test', space: 'default' };

async function enqueue(d: Database, q: JobQueue, kind: string, n: number, wakeInside = false): Promise<string> {
  const operationId = randomUUID();
  await d.transaction(async (tx) => {
    await q.enqueue(
      tx,
      operationId,
      partition,
      kind,
      Array.from({ length: n }, (_, i) => ({ kind, payload: { i } })),
      n,
    );
    // As the retain hook does: the nudge can come before the commit.
    if (wakeInside) q.wake();
  });
  if (!wakeInside) q.wake();
  return operationId;
}

async function statuses(operationId: string) {
  return await db.query<{ id: string; status: string; attempts: number }>(
    'SELECT id, status, attempts FROM jobs WHERE operation_id = $1',
    [operationId],
  );
}

test(
  'a job enqueued while the workers idle starts at once, whether the nudge comes after or before the commit',
  { timeout: 300_000 },
  async () => {
    const d = await database();
    const seen: number[] = [];
    let arrived: (() => void) | undefined;
    const q = queue(d, 2, 'wake', (job) => {
      seen.push(job.payload['i'] as number);
      arrived?.();
      return Promise.resolve();
    });
    await q.start();
    // Let the queue find nothing and settle into its (hour-long) idle wait.
    await new Promise((r) => setTimeout(r, 100));
    for (const wakeInside of [false, true]) {
      const ran = new Promise<void>((r) => (arrived = r));
      const op = await enqueue(d, q, 'wake', 1, wakeInside);
      await ran;
      await q.stop();
      assert.deepEqual(
        (await statuses(op)).map((j) => j.status),
        ['succeeded'],
      );
      await q.start();
    }
    assert.equal(seen.length, 2);
  },
);

test(
  'one claim fills every free slot; two queues on one database run each job exactly once',
  { timeout: 300_000 },
  async () => {
    const d = await database();
    const runs = new Map<string, number>();
    let maxBusy = 0;
    const make = () => {
      const q: JobQueue = queue(d, 3, 'batch', async (job, ctx) => {
        runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
        maxBusy = Math.max(maxBusy, q.busy);
        await new Promise((r) => setTimeout(r, 10));
        await ctx.complete(
          async (tx) => {
            await tx.query('UPDATE jobs SET result = result WHERE id = $1', [job.id]);
          },
          { i: job.payload['i'] },
        );
      });
      return q;
    };
    const a = make();
    const b = make();
    await a.start();
    await b.start();
    const op = await enqueue(d, a, 'batch', 30);
    b.wake();
    const deadline = async () => {
      for (;;) {
        const s = await statuses(op);
        if (s.every((j) => j.status === 'succeeded')) return s;
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const done = await deadline();
    assert.equal(done.length, 30);
    assert.ok(
      done.every((j) => j.attempts === 1),
      'no job was claimed twice',
    );
    assert.equal(runs.size, 30);
    assert.ok(
      [...runs.values()].every((n) => n === 1),
      'every job ran once',
    );
    assert.equal(maxBusy, 3, 'a queue ran as many jobs at once as it has slots');
    await a.stop();
    await b.stop();
  },
);

test(
  'a worker whose lease was taken over cannot complete the job; the new owner does, once',
  { timeout: 300_000 },
  async () => {
    const d = await database();
    let release: (() => void) | undefined;
    const gate = new Promise<void>((r) => (release = r));
    let started: (() => void) | undefined;
    const running = new Promise<void>((r) => (started = r));
    let outcome: unknown;
    const q = queue(d, 1, 'lease', async (_job, ctx) => {
      started?.();
      await gate;
      try {
        await ctx.complete(() => Promise.resolve(undefined), { by: 'first' });
        outcome = 'completed';
      } catch (error) {
        outcome = error;
        throw error;
      }
    });
    await q.start();
    const op = await enqueue(d, q, 'lease', 1);
    await running;
    // Another worker took the job over (as after an expired lease).
    const other = randomUUID();
    await d.query('UPDATE jobs SET lease = $2 WHERE operation_id = $1', [op, other]);
    release?.();
    await q.stop();
    assert.ok(outcome instanceof LeaseLostError);
    const [row] = await d.query<{ status: string; lease: string; result: unknown }>(
      'SELECT status, lease, result FROM jobs WHERE operation_id = $1',
      [op],
    );
    assert.deepEqual([row?.status, row?.lease, row?.result], ['running', other, null]);
  },
);

test('a failed job is retried when its backoff ends, without waiting for a poll', { timeout: 300_000 }, async () => {
  const d = await database();
  const attempts: number[] = [];
  // The poll interval is an hour: only the retry's own wake can run the second attempt within the test.
  const q = queue(d, 1, 'flaky', async (job) => {
    attempts.push(job.attempts);
    if (job.attempts === 1) throw new Error('the first attempt fails');
  });
  await q.start();
  const op = await enqueue(d, q, 'flaky', 1);
  const deadline = Date.now() + 120_000;
  let rows = await statuses(op);
  while (rows[0]?.status !== 'succeeded' && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    rows = await statuses(op);
  }
  assert.deepEqual(
    rows.map((j) => [j.status, j.attempts]),
    [['succeeded', 2]],
  );
  assert.deepEqual(attempts, [1, 2]);
  await q.stop();
});
