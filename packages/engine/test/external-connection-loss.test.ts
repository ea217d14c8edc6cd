// The external-database layer against a real PostgreSQL server (no pgvector needed: only the schema's first steps, for
// the job queue's tables): backends killed with pg_terminate_backend fail only the work that was on them and never end
// the process, the pool recovers by itself, a statement over the timeout fails as "unavailable" (503, not 500), and
// job workers on one engine are woken by another engine's enqueue through LISTEN/NOTIFY, also after their listening
// connection was killed.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { DatabaseUnavailableError, findDatabaseUnavailable } from '../src/db/availability.js';
import type { Database } from '../src/db/database.js';
import { migrations } from '../src/db/migrations/index.js';
import { openExternalDatabase } from '../src/db/postgres.js';
import { JobQueue } from '../src/jobs/queue.js';
import { createScratchDatabase, waitFor, type ScratchDatabase } from './helpers/postgres-server.js';

const HOUR = 3_600_000;
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
let scratch: ScratchDatabase;
const opened: Database[] = [];
const queues: JobQueue[] = [];
const availability: Array<{ available: boolean; reason: string }> = [];

before(async () => {
  scratch = await createScratchDatabase('mnemos_connloss');
  // The job queue's tables with their current keys: the migrations up to the tenant keys, which need no pgvector (the
  // embedding column and its indexes come from later steps this server cannot run).
  for (const m of migrations.filter((m) => m.version <= 6)) await scratch.admin(m.sql);
});

after(async () => {
  for (const q of queues) await q.stop();
  for (const d of opened) await d.close().catch(() => undefined);
  await scratch?.drop();
});

async function open(poolSize: number, statementTimeoutMs = 0): Promise<Database> {
  const db = await openExternalDatabase(scratch.url, {
    poolSize,
    statementTimeoutMs,
    onAvailability: (available, reason) => availability.push({ available, reason }),
  });
  opened.push(db);
  return db;
}

/** Kills every backend of the scratch database except the administrator's own, as an operator or a failover would. */
async function terminateAll(filter = 'true'): Promise<number> {
  const rows = await scratch.admin<{ n: number }>(
    `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid() AND ${filter}`,
  );
  return rows[0]?.n ?? 0;
}

/** Runs `fn` until it succeeds; each failure on the way must be a DatabaseUnavailableError. */
async function untilAnswered<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      assert.ok(error instanceof DatabaseUnavailableError, `expected an unavailable error, got ${String(error)}`);
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

describe('external database: lost connections', { timeout: 120_000 }, () => {
  it('a backend killed inside a transaction fails only that transaction, and the next one runs', async () => {
    const db = await open(2);
    await db.exec('CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)');
    const before = availability.length;
    let otherCommitted = false;
    const doomed = db.transaction(async (tx) => {
      await tx.query("INSERT INTO notes (body) VALUES ('lost')");
      const [me] = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      // Another transaction on the other pooled connection commits while this one is open.
      await db.transaction(async (other) => other.query("INSERT INTO notes (body) VALUES ('kept')"));
      otherCommitted = true;
      await scratch.admin('SELECT pg_terminate_backend($1)', [me!.pid]);
      // The connection drops while this transaction holds it between two queries: node-postgres emits 'error' on the
      // idle client, which without a listener ends the process. Wait until the engine has heard it.
      await waitFor('the lost connection to be noticed', () => availability.length > before);
      await tx.query("INSERT INTO notes (body) VALUES ('also lost')");
    });
    await assert.rejects(doomed, (error: unknown) => {
      const unavailable = findDatabaseUnavailable(error);
      assert.ok(unavailable, `expected an unavailable error, got ${String(error)}`);
      assert.equal(unavailable.reason, 'unreachable');
      assert.equal(unavailable.code, 'database_unavailable');
      assert.match(unavailable.message, /out of reach .*retry shortly/);
      return true;
    });
    assert.ok(otherCommitted);
    assert.equal(availability[before]?.available, false);
    const rows = await untilAnswered(() => db.query<{ body: string }>('SELECT body FROM notes ORDER BY id'));
    assert.deepEqual(
      rows.map((r) => r.body),
      ['kept'],
    );
    assert.equal(availability.at(-1)?.available, true, 'the recovery is reported');
  });

  it('every connection killed while idle in the pool: the pool reconnects by itself', async () => {
    const db = await open(3);
    await Promise.all([1, 2, 3].map(() => db.query('SELECT pg_sleep(0.05)')));
    assert.ok((await terminateAll()) >= 1);
    for (let i = 0; i < 5; i++) {
      const [row] = await untilAnswered(() => db.query<{ n: number }>('SELECT 40 + $1::int AS n', [i]));
      assert.equal(row?.n, 40 + i);
    }
  });

  it('a statement over the statement timeout fails as unavailable, and the connection stays usable', async () => {
    const db = await open(1, 200);
    assert.deepEqual(await db.query('SHOW statement_timeout'), [{ statement_timeout: '200ms' }]);
    // The pool size is a ceiling: three statements at once on a pool of one take turns.
    const together = Promise.all([1, 2, 3].map(() => db.query('SELECT pg_sleep(0.05)')));
    await waitFor('the three to queue for the one connection', () => db.stats().waiting >= 2);
    assert.equal(db.stats().total, 1);
    await together;
    await assert.rejects(db.query('SELECT pg_sleep(5)'), (error: unknown) => {
      assert.ok(error instanceof DatabaseUnavailableError, String(error));
      assert.equal(error.reason, 'timeout');
      assert.match(error.message, /MNEMOS_API_DATABASE_STATEMENT_TIMEOUT_MS/);
      return true;
    });
    // A wrong query is not "unavailable": it keeps its own error (and becomes a 500 or a 4xx, as before).
    await assert.rejects(
      db.query('SELECT * FROM no_such_table'),
      (error: unknown) => !(error instanceof DatabaseUnavailableError),
    );
    assert.deepEqual(await db.query('SELECT 1 AS one'), [{ one: 1 }]);
  });
});

describe('external database: start', { timeout: 120_000 }, () => {
  it('a database the engine cannot connect to at start fails it with one line naming the setting', async () => {
    const url = new URL(scratch.url);
    url.password = 'not-the-password';
    const opening = openExternalDatabase(url.toString(), { poolSize: 1, statementTimeoutMs: 0 });
    await assert.rejects(opening, (error: unknown) => {
      assert.ok(error instanceof Error);
      assert.match(error.message, /^Cannot connect to the database in MNEMOS_API_DATABASE_URL \(.+\); check that/);
      assert.doesNotMatch(error.message, /\n/);
      return true;
    });
  });
});

describe('job workers woken by NOTIFY', { timeout: 120_000 }, () => {
  it("an enqueue wakes another engine's idle workers, also after their listening connection was killed", async () => {
    const producerDb = await open(2);
    const workerDb = await open(2);
    // Neither queue polls within the test's lifetime: only a notification can start the job.
    const producer = new JobQueue(producerDb, log, { concurrency: 1, pollMs: HOUR });
    const worker = new JobQueue(workerDb, log, { concurrency: 1, pollMs: HOUR });
    queues.push(producer, worker);
    const ran: string[] = [];
    worker.register('note', async (job) => {
      ran.push(String(job.payload['label']));
    });
    await producer.start();
    await worker.start();
    const listening = () =>
      scratch
        .admin<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'",
        )
        .then((rows) => (rows[0]?.n ?? 0) > 0);
    await waitFor('the worker to listen', listening);

    const enqueue = (label: string) =>
      producerDb.transaction((tx) =>
        producer.enqueue(tx, randomUUID(), { tenant: 'default', bankId: 'b', space: 'default' }, 'note', [
          { kind: 'note', payload: { label } },
        ]),
      );
    await enqueue('first');
    await waitFor('the first job to run', () => ran.includes('first'));

    assert.ok((await terminateAll("query ILIKE 'LISTEN%'")) >= 1);
    await waitFor('the worker to listen again', listening);
    await enqueue('second');
    await waitFor('the second job to run', () => ran.includes('second'));
    assert.deepEqual(ran, ['first', 'second']);
  });
});
