/**
 * The largest and smallest of many numbers. `Math.max(...values)` passes every value as an argument, and an array of
 * some hundred thousand values overflows the call stack; these loop instead.
 */

/** The largest of `values`, or `empty` when there are none. */
export function maxOf(values: Iterable<number>, empty = -Infinity): number {
  let max = empty;
  let any = false;
  for (const v of values) {
    max = any ? Math.max(max, v) : v;
    any = true;
  }
  return any ? max : empty;
}

/** The smallest of `values`, or `empty` when there are none. */
export function minOf(values: Iterable<number>, empty = Infinity): number {
  let min = empty;
  let any = false;
  for (const v of values) {
    min = any ? Math.min(min, v) : v;
    any = true;
  }
  return any ? min : empty;
}
