import { PGlite, type Transaction } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { keepCreatedFilesPrivate } from '../util/private-files.js';
import { serveThread, threadData } from '../util/thread.js';
import type { SqlParam } from './database.js';

/** What the database thread starts with. */
export interface DbThreadStart {
  dataDir: string;
  startParams: string[];
}

/**
 * The worker-thread side of the embedded database (pglite.ts): PGlite runs here, so its WebAssembly Postgres (parsing,
 * planning, executing, writing pages) no longer takes the event loop's time. Calls are answered in the order PGlite
 * completes them; a transaction stays open between the main thread's `begin` and `end`. Postgres errors reach the
 * main thread with their fields (`code` is the SQLSTATE).
 */

/** Thrown inside a transaction's callback to roll it back when the main thread's work failed. */
/** The reason a transaction the caller rolls back ends with; matched by identity, never shown. */
const ROLLBACK = new Error('rolled back by the caller');

async function open() {
  const start = threadData() as DbThreadStart;
  keepCreatedFilesPrivate();
  const pg = await PGlite.create({ dataDir: start.dataDir, extensions: { vector }, startParams: start.startParams });
  /** Open transactions by number; `end` commits or rolls back and gives the transaction's outcome. */
  const transactions = new Map<number, { tx: Transaction; end: (commit: boolean) => Promise<void> }>();
  let nextTransaction = 0;
  const target = (tx: number | undefined): PGlite | Transaction => {
    if (tx === undefined) return pg;
    const t = transactions.get(tx);
    if (!t) throw new Error(`transaction ${tx} is not open`);
    return t.tx;
  };
  return {
    async query(sql: string, params: SqlParam[], tx?: number, blob?: Uint8Array): Promise<object[]> {
      const options = blob ? { blob: new Blob([blob]) } : undefined;
      return (await target(tx).query<object>(sql, params, options)).rows;
    },
    async exec(sql: string, tx?: number): Promise<void> {
      await target(tx).exec(sql);
    },
    /** Resolves with the transaction's number once inside it; it ends when `end` comes (committed, or rolled back). */
    begin(): Promise<number> {
      const id = nextTransaction++;
      return new Promise<number>((opened, failedToOpen) => {
        const outcome: Promise<void> = pg.transaction(
          (tx) =>
            new Promise<void>((commit, rollback) => {
              transactions.set(id, {
                tx,
                end: (commitIt) => {
                  if (commitIt) commit();
                  else rollback(ROLLBACK);
                  return outcome;
                },
              });
              opened(id);
            }),
        );
        // A failure before the transaction opened answers the `begin` (later ones answer the `end`, and rejecting an
        // answered `begin` does nothing).
        outcome.catch(failedToOpen).finally(() => transactions.delete(id));
      });
    },
    async end(tx: number, commit: boolean): Promise<void> {
      const t = transactions.get(tx);
      if (!t) throw new Error(`transaction ${tx} is not open`);
      await t
        .end(commit)
        .catch((error: unknown) =>
          error === ROLLBACK ? undefined : Promise.reject(error instanceof Error ? error : new Error(String(error))),
        );
    },
    close: () => pg.close(),
  };
}

export type DatabaseThread = Awaited<ReturnType<typeof open>>;

serveThread(open);
