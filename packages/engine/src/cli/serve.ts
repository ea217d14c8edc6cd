import { startEngine, type RunningEngine } from '../index.js';
import { announcer, type EngineLogger } from '../log.js';
import { limitHeapGrowth } from '../startup/heap-growth.js';
import { errorMessage } from '../util/error-message.js';

/**
 * `mnemos serve`: starts the engine from the environment. SIGINT and SIGTERM stop it: new requests are refused, the
 * ones in flight finish, running jobs go back to the queue and the database closes, then the process exits 0. A
 * signal while the engine still warms exits at once: no write can have been acknowledged yet (data routes answer
 * 503 until ready), and the next start takes over the database lock of this exited process.
 */
export async function serve(): Promise<number> {
  limitHeapGrowth();
  let log: EngineLogger | undefined;
  let running: RunningEngine | undefined;
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log?.info(`${signal} received; stopping`);
    if (running === undefined) process.exit(0);
    running.close().then(
      () => {
        log?.info('engine stopped');
        process.exit(0);
      },
      (error: unknown) => {
        log?.error(`stopping failed: ${errorMessage(error)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  running = await startEngine({
    onListening: (url, logger) => {
      log = logger;
      // Scripts and the test helpers wait for this line; /health answers "warming" until the engine is ready.
      announcer(logger).info(`engine listening on ${url} (docs at ${url}/docs); /health says when it is ready`);
    },
  });
  return -1;
}
