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
 * completes them. A transaction opens with its first statement (the call that carries `begin`), so opening it costs
 * no message of its own, and stays open until the main thread's `end`. Postgres errors reach the main thread with
 * their fields (`code` is the SQLSTATE).
 */

/** The reason a transaction the caller rolls back ends with; matched by identity, never shown. */
const ROLLBACK = new Error('rolled back by the caller');

/** An open transaction: `end` commits or rolls it back and gives the transaction's outcome. */
interface OpenTransaction {
  tx: Transaction;
  end: (commit: boolean) => Promise<void>;
}

async function open() {
  const start = threadData() as DbThreadStart;
  keepCreatedFilesPrivate();
  const pg = await PGlite.create({ dataDir: start.dataDir, extensions: { vector }, startParams: start.startParams });
  /**
   * Transactions by the main thread's number, from the call that opens them (resolving once inside) until they end.
   * A later call of the same transaction may arrive before the opening completes: it waits for it.
   */
  const transactions = new Map<number, Promise<OpenTransaction>>();
  const begin = (id: number): Promise<OpenTransaction> => {
    const opening = new Promise<OpenTransaction>((opened, failedToOpen) => {
      const outcome: Promise<void> = pg.transaction(
        (tx) =>
          new Promise<void>((commit, rollback) => {
            opened({
              tx,
              end: (commitIt) => {
                if (commitIt) commit();
                else rollback(ROLLBACK);
                return outcome;
              },
            });
          }),
      );
      // A failure before the transaction opened fails the statement that opens it (later ones answer the `end`, and
      // rejecting an opened transaction's promise does nothing).
      outcome.catch(failedToOpen).finally(() => transactions.delete(id));
    });
    transactions.set(id, opening);
    return opening;
  };
  const target = async (tx: number | undefined, opens: boolean): Promise<PGlite | Transaction> => {
    if (tx === undefined) return pg;
    const t = opens ? begin(tx) : transactions.get(tx);
    if (!t) throw new Error(`transaction ${tx} is not open`);
    return (await t).tx;
  };
  return {
    /** Runs one statement: by itself, or in transaction `tx` (which it opens first when `opens`). */
    async query(sql: string, params: SqlParam[], tx?: number, blob?: Uint8Array, opens = false): Promise<object[]> {
      const options = blob ? { blob: new Blob([blob]) } : undefined;
      return (await (await target(tx, opens)).query<object>(sql, params, options)).rows;
    },
    async exec(sql: string, tx?: number, opens = false): Promise<void> {
      await (await target(tx, opens)).exec(sql);
    },
    async end(tx: number, commit: boolean): Promise<void> {
      const t = transactions.get(tx);
      if (!t) throw new Error(`transaction ${tx} is not open`);
      await (
        await t
      )
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
