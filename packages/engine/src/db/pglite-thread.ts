import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import type { DbThreadReply, DbThreadRequest, DbThreadStart, ThreadError } from './pglite.js';

/**
 * The worker-thread side of the embedded database (pglite.ts): PGlite runs here, so its WebAssembly Postgres (parsing,
 * planning, executing, writing pages) no longer takes the event loop's time. Requests are answered in the order
 * PGlite completes them; a transaction stays open between the main thread's `begin` and `end`.
 */
const port = parentPort!;
const reply = (message: DbThreadReply) => port.postMessage(message);
const start = workerData as DbThreadStart;

/** A Postgres error as plain fields (an Error loses its extra fields crossing threads); `code` is the SQLSTATE. */
function describe(error: unknown): ThreadError {
  if (!(error instanceof Error)) return { message: String(error) };
  const out: ThreadError = { message: error.message, name: error.name };
  for (const [key, value] of Object.entries(error)) {
    if (typeof value === 'string' || typeof value === 'number') out[key] = value;
  }
  return out;
}

/** Thrown inside a transaction's callback to roll it back when the main thread's work failed. */
const ROLLBACK = Symbol('rollback');

try {
  const pg = await PGlite.create({ dataDir: start.dataDir, extensions: { vector }, startParams: start.startParams });
  /** Open transactions by the seq of their `begin`; `end` commits or rolls back and gives the transaction's outcome. */
  const open = new Map<number, { tx: Transaction; end: (commit: boolean) => Promise<void> }>();
  const answer = (seq: number, work: Promise<unknown>, rows: boolean) =>
    work.then(
      (result) => reply(rows ? { type: 'rows', seq, rows: (result as { rows: object[] }).rows } : { type: 'done', seq }),
      (error: unknown) => reply({ type: 'failed', seq, error: describe(error) }),
    );
  const target = (tx: number | undefined): PGlite | Transaction => {
    if (tx === undefined) return pg;
    const t = open.get(tx);
    if (!t) throw new Error(`transaction ${tx} is not open`);
    return t.tx;
  };
  port.on('message', (request: DbThreadRequest) => {
    try {
      switch (request.type) {
        case 'query': {
          const options = request.blob ? { blob: new Blob([request.blob]) } : undefined;
          void answer(request.seq, target(request.tx).query(request.sql, request.params, options), true);
          return;
        }
        case 'exec':
          void answer(request.seq, target(request.tx).exec(request.sql), false);
          return;
        case 'begin': {
          // Answers `done` once inside; the transaction ends when `end` arrives (committed, or rolled back).
          const outcome: Promise<void> = pg.transaction(
            (tx) =>
              new Promise<void>((resolve, reject) => {
                open.set(request.seq, {
                  tx,
                  end: (commit) => {
                    if (commit) resolve();
                    else reject(ROLLBACK);
                    return outcome;
                  },
                });
                reply({ type: 'done', seq: request.seq });
              }),
          );
          outcome.catch((error: unknown) => {
            // A failure before the transaction opened has no `end` waiting: it answers the `begin`. Later ones answer
            // the `end`.
            if (!open.has(request.seq)) reply({ type: 'failed', seq: request.seq, error: describe(error) });
          }).finally(() => open.delete(request.seq));
          return;
        }
        case 'end': {
          const t = open.get(request.tx);
          if (!t) throw new Error(`transaction ${request.tx} is not open`);
          const ended = t.end(request.commit).catch((error: unknown) => (error === ROLLBACK ? undefined : Promise.reject(error)));
          void answer(request.seq, ended, false);
          return;
        }
        case 'close':
          void pg.close().finally(() => {
            reply({ type: 'done', seq: request.seq });
            port.close();
          });
          return;
      }
    } catch (error) {
      reply({ type: 'failed', seq: request.seq, error: describe(error) });
    }
  });
  reply({ type: 'ready' });
} catch (error) {
  reply({ type: 'failed', seq: -1, error: describe(error) });
}
