import { registerAsyncRetain, retainAsync } from '../jobs/index.js';
import { operationStatus } from '../jobs/operations.js';
import { NOTHING_TO_CLOSE, type EnginePlugin } from './types.js';

/**
 * Async retain (`async: true`): the items are stored as a durable job and the call answers at once with an operation
 * id, whose status GET /v1/{tenant}/operations/{id} reports.
 */
export const asyncRetainPlugin: EnginePlugin = {
  name: 'async-retain',
  install(engine) {
    registerAsyncRetain(engine, engine.queue);
    return {
      // No retain hook of its own: each job's retain completes the job in its transaction (jobs/index.ts).
      hooks: {
        retainLater: (partition, items) => retainAsync(engine, engine.queue, partition, items),
        operationStatus: (tenant, id) => operationStatus(engine.db, tenant, id),
      },
      close: NOTHING_TO_CLOSE,
    };
  },
};
