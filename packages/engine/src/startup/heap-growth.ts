import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the heap grow past what the last full collection kept before it collects again, in percent. V8's
 * own factor, on a machine with gigabytes, is up to four times: an engine whose live heap is 100 MiB then holds up
 * to 400 MiB between collections, most of it recalls' garbage, and its resident memory swings by that much. 30%
 * keeps it near the live heap; the collector runs more often, on a small heap.
 */
export const HEAP_GROWING_PERCENT = 30;

/** Sets the engine process's heap growth (V8 reads it at every collection, so setting it at start suffices). */
export function limitHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
