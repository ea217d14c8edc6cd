import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { call } from './engine.js';

/**
 * prom-client samples the event loop every 10 ms and records each whole interval, so an idle loop shows about 10 ms;
 * the probe below samples the same way.
 */
export const SAMPLING_MS = 10;

/** The engine's largest event-loop lag since the previous scrape, in ms (prom-client resets it on every scrape). */
export async function engineLagMaxMs(baseUrl: string): Promise<number> {
  const metrics = await call<string>(baseUrl, 'GET', '/metrics');
  const match = /^mnemos_nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(metrics.body);
  assert.ok(match, 'the engine reports mnemos_nodejs_eventloop_lag_max_seconds');
  return Number(match[1]) * 1000;
}

export interface LagProbe {
  /** The largest event-loop lag any probe process saw since the previous read, in ms. */
  read(): Promise<number>;
  stop(): void;
}

/** Measures its own idle event loop as prom-client does, answering (and resetting) the maximum on each input line. */
const PROBE = `
const { monitorEventLoopDelay } = require('node:perf_hooks');
const lag = monitorEventLoopDelay({ resolution: ${SAMPLING_MS} });
lag.enable();
require('node:readline').createInterface({ input: process.stdin }).on('line', () => {
  process.stdout.write(lag.max / 1e6 + '\\n');
  lag.reset();
});
`;

/** One probe process (see startLagProbes). */
function startProbe(): LagProbe {
  const child = spawn(process.execPath, ['-e', PROBE], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    async read() {
      child.stdin.write('\n');
      const line = await lines.next();
      assert.ok(!line.done, 'the lag probe answers');
      return Number(line.value);
    },
    stop() {
      child.stdin.end();
      child.kill();
    },
  };
}

/**
 * Node processes that do nothing but measure their event loops. Their loops have no work, so whatever lag beyond one
 * sampling interval they see is time they waited for a core: what other processes on a busy machine add to the lag of
 * any process started next to them, such as a test's engine, over the same stretch of time. Those waits come and go
 * at random, so the largest of several probes stands for what one more process may have met.
 */
export async function startLagProbes(count = 3): Promise<LagProbe> {
  const probes = Array.from({ length: count }, startProbe);
  const probe: LagProbe = {
    read: async () => Math.max(...(await Promise.all(probes.map((p) => p.read())))),
    stop: () => probes.forEach((p) => p.stop()),
  };
  await probe.read();
  return probe;
}
