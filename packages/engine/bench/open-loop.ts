import { percentile } from './stats.js';

/**
 * Open-loop load: requests arrive on a schedule fixed before the run (a Poisson process at the offered rate), whether
 * or not earlier ones have been answered, as requests from many independent agents do. A closed loop (each client
 * waits for its answer before sending again) slows its own arrivals when the server slows, which hides queueing; here
 * every latency is measured from the request's scheduled send time, so time spent waiting for a free connection, or
 * for a client that fell behind its schedule, counts.
 */

export type Operation = 'recall' | 'retain';

export interface Arrival<Op> {
  /** Milliseconds after the run starts at which the request is due. */
  at: number;
  op: Op;
}

/** Arrival times (ms) of a Poisson process of `ratePerSecond` over `seconds`, from a uniform [0, 1) generator. */
export function poissonArrivals(ratePerSecond: number, seconds: number, random: () => number): number[] {
  if (!(ratePerSecond > 0)) throw new Error(`the offered rate must be above 0 requests/s (got ${ratePerSecond})`);
  const out: number[] = [];
  const end = seconds * 1000;
  // Exponential gaps with mean 1/rate; 1 - u keeps the logarithm finite for u = 0.
  for (let t = (-Math.log(1 - random()) / ratePerSecond) * 1000; t < end;) {
    out.push(t);
    t += (-Math.log(1 - random()) / ratePerSecond) * 1000;
  }
  return out;
}

/** The mix: Poisson arrivals, each a retain with probability `retainShare` (drawn from its own generator), else a recall. */
export function mixedArrivals(
  ratePerSecond: number,
  seconds: number,
  retainShare: number,
  times: () => number,
  kinds: () => number,
): Array<Arrival<Operation>> {
  return poissonArrivals(ratePerSecond, seconds, times).map((at) => ({
    at,
    op: kinds() < retainShare ? 'retain' : 'recall',
  }));
}

export interface Clock {
  now(): number;
  /** Resolves at `time` (on the `now()` scale), at once when it has passed. */
  sleepUntil(time: number): Promise<void>;
}

export const realClock: Clock = {
  now: () => performance.now(),
  sleepUntil: (time) => {
    const wait = time - performance.now();
    return wait > 0 ? new Promise((resolve) => setTimeout(resolve, wait)) : Promise.resolve();
  },
};

export interface Completion<Op, R> {
  op: Op;
  /** When the request was due, sent, and answered (clock ms). */
  scheduled: number;
  sent: number;
  finished: number;
  /** Answer time from the scheduled send time: what the caller waited. */
  latency: number;
  /** Time between the scheduled send time and the send (no free connection, or the client behind its schedule). */
  queued: number;
  result: R | undefined;
  /** Set when `send` threw (a refused connection, a broken answer). */
  error: string | undefined;
}

/**
 * Sends each arrival at its time over at most `connections` requests in flight; arrivals beyond that wait, in order,
 * for a free connection. Resolves, once every request has finished, with the completions in finishing order.
 */
export async function runOpenLoop<Op, R>(
  arrivals: ReadonlyArray<Arrival<Op>>,
  connections: number,
  send: (op: Op) => Promise<R>,
  clock: Clock = realClock,
): Promise<Array<Completion<Op, R>>> {
  const start = clock.now();
  const waiting: Array<{ op: Op; scheduled: number }> = [];
  let head = 0;
  let free = connections;
  const done: Array<Completion<Op, R>> = [];
  const inFlight = new Set<Promise<void>>();
  const pump = () => {
    while (free > 0 && head < waiting.length) {
      const { op, scheduled } = waiting[head++]!;
      free--;
      const sent = clock.now();
      const finish = (result: R | undefined, error: string | undefined) => {
        const finished = clock.now();
        done.push({
          op,
          scheduled,
          sent,
          finished,
          latency: finished - scheduled,
          queued: sent - scheduled,
          result,
          error,
        });
        free++;
        inFlight.delete(request);
        pump();
      };
      const request: Promise<void> = send(op).then(
        (result) => finish(result, undefined),
        (error: unknown) => finish(undefined, error instanceof Error ? error.message : String(error)),
      );
      inFlight.add(request);
    }
  };
  for (const arrival of arrivals) {
    await clock.sleepUntil(start + arrival.at);
    waiting.push({ op: arrival.op, scheduled: start + arrival.at });
    pump();
  }
  while (inFlight.size > 0) await Promise.all([...inFlight]);
  return done;
}

export interface LatencySummary {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export function summarise(latencies: readonly number[]): LatencySummary {
  return {
    count: latencies.length,
    p50: percentile([...latencies], 50),
    p95: percentile([...latencies], 95),
    p99: percentile([...latencies], 99),
    max: latencies.reduce((a, b) => Math.max(a, b), 0),
  };
}

export interface CapacitySearch {
  /** The highest offered rate tried that met the bar (0 when none did). */
  capacity: number;
  tried: Array<{ rate: number; met: boolean }>;
}

/**
 * The highest offered rate that meets the bar: from `start`, step up by `step` while each rate meets it (up to
 * `max`); then bisect `rounds` times between the last rate that met it and the first that did not (0 and `start` when
 * `start` already failed). Each rate is one run of `meets`.
 */
export async function searchCapacity(
  plan: { start: number; step: number; max: number; rounds: number },
  meets: (rate: number) => Promise<boolean>,
): Promise<CapacitySearch> {
  const tried: Array<{ rate: number; met: boolean }> = [];
  const attempt = async (rate: number) => {
    const met = await meets(rate);
    tried.push({ rate, met });
    return met;
  };
  let passed = 0;
  let failed: number | undefined;
  for (let rate = plan.start; rate <= plan.max; rate += plan.step) {
    if (!(await attempt(rate))) {
      failed = rate;
      break;
    }
    passed = rate;
  }
  for (let round = 0; failed !== undefined && round < plan.rounds; round++) {
    const middle: number = (passed + failed) / 2;
    if (await attempt(middle)) passed = middle;
    else failed = middle;
  }
  return { capacity: passed, tried };
}
