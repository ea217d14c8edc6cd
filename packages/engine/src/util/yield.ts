import { setImmediate as nextTurn } from 'node:timers/promises';

/** Work between two yields in a long loop over caller input: short enough for a health probe not to notice. */
const DEFAULT_SLICE_MS = 8;

/** Lets every other callback that is ready run first (a turn of the event loop), then resumes. */
export function yieldToEventLoop(): Promise<void> {
  return nextTurn();
}

/**
 * A pause for long loops over caller input: awaiting it yields to the event loop once `sliceMs` of work has run since
 * the last yield (and costs nothing otherwise), so other requests keep being answered while a large input is processed.
 */
export function eventLoopSlicer(sliceMs = DEFAULT_SLICE_MS): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < sliceMs) return;
    await nextTurn();
    since = performance.now();
  };
}
