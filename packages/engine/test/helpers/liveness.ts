import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

/** The slowest /health/live answer allowed while heavy caller input is processed. */
export const LIVE_WITHIN_MS = 100;

/**
 * Probes `${baseUrl}/health/live` one request after another until `work` settles; returns its result, the slowest
 * probe and how many ran.
 */
export async function probeDuring<T>(
  baseUrl: string,
  work: Promise<T>,
): Promise<{ result: T; slowestMs: number; probes: number }> {
  let done = false;
  const settled = work.finally(() => {
    done = true;
  });
  let slowestMs = 0;
  let probes = 0;
  while (!done) {
    const started = performance.now();
    const live = await fetch(`${baseUrl}/health/live`);
    await live.arrayBuffer();
    slowestMs = Math.max(slowestMs, performance.now() - started);
    probes++;
    assert.equal(live.status, 200);
    await sleep(5);
  }
  return { result: await settled, slowestMs, probes };
}

/**
 * The slowest probe of an idle engine over two seconds. On a shared, loaded machine a process can wait for a core
 * however well it behaves; bounds add this floor (a millisecond or two on a quiet machine).
 */
export async function idleFloorMs(baseUrl: string): Promise<number> {
  return (await probeDuring(baseUrl, sleep(2000))).slowestMs;
}

/** Asserts the probes ran during the work and none took longer than LIVE_WITHIN_MS above the idle floor. */
export function assertLive(probe: { slowestMs: number; probes: number }, floorMs: number): void {
  assert.ok(probe.probes >= 3, `only ${probe.probes} liveness probes ran during the work`);
  const bound = LIVE_WITHIN_MS + floorMs;
  assert.ok(
    probe.slowestMs < bound,
    `the slowest /health/live probe took ${probe.slowestMs.toFixed(0)} ms (bound ${bound.toFixed(0)} ms)`,
  );
}
