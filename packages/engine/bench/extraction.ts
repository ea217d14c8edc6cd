#!/usr/bin/env node
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startEngine, type RunningEngine } from '../src/index.js';
import { ThreadClient } from '../src/util/thread.js';
import type { FakeLlmThread } from './fake-llm-thread.js';
import { benchModelDir } from './local-model.js';
import { ms, percentile } from './stats.js';

/**
 * LLM-layer bars: (1) extraction throughput: the queue keeps the configured concurrency busy, measured against a local
 * OpenAI-compatible server that answers every call after a fixed delay (ideal = concurrency / delay); (2) single
 * retain latency with an LLM configured vs without (extraction is off the request path), interleaved on two engines.
 *
 *   node --conditions=source --import tsx packages/engine/bench/extraction.ts [--memories 200] [--delay-ms 200] [--concurrency 4] [--throughput-only]
 */

const model = benchModelDir();

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  const v = i >= 0 ? Number(process.argv[i + 1]) : NaN;
  return Number.isFinite(v) && v > 0 ? Math.trunc(v) : fallback;
}
const THROUGHPUT_ONLY = process.argv.includes('--throughput-only');
const MEMORIES = arg('--memories', 200);
const DELAY_MS = arg('--delay-ms', 200);
const CONCURRENCY = arg('--concurrency', 4);

/** A fixed-delay LLM (one fact per memory) in its own thread; records when every call started and ended (server side). */
async function fakeLlm() {
  const thread = await ThreadClient.start<FakeLlmThread>(import.meta.url, 'fake-llm-thread', {
    data: { delayMs: DELAY_MS },
    stopped: (code) => new Error(`the fake LLM's thread stopped (exit code ${code})`),
  });
  const port = await thread.call('port', []);
  return {
    url: `http://127.0.0.1:${port}/v1`,
    /** The calls that started at or after `since` (performance.now() of this thread). */
    callsSince: async (since: number) => {
      const calls = await thread.call('calls', []);
      return calls
        .map((c) => ({ start: c.start - performance.timeOrigin, end: c.end - performance.timeOrigin }))
        .filter((c) => c.start >= since);
    },
    close: async () => {
      await thread.call('close', []);
      await thread.terminate();
    },
  };
}

interface Phase {
  /** Milliseconds. */
  ms: number;
  /** Mean LLM calls in flight over the phase. */
  inFlight: number;
}

/**
 * Splits a run into ramp-up (from the request that enqueues the work until `concurrency` calls are first in flight),
 * steady state (from then until the last call starts: work is always waiting, so ideally `concurrency` calls are in
 * flight all along) and tail (from the last call's start until the queue is empty), with the mean calls in flight of
 * each phase, computed from the server's own start/end times of every call.
 */
function profile(
  calls: ReadonlyArray<{ start: number; end: number }>,
  t0: number,
  drained: number,
  concurrency: number,
) {
  const events = calls
    .flatMap((c) => [
      { at: c.start, d: 1 },
      { at: c.end, d: -1 },
    ])
    .sort((a, b) => a.at - b.at || a.d - b.d);
  /** Mean in flight over [from, to). */
  const mean = (from: number, to: number): number => {
    if (to <= from) return 0;
    let n = 0;
    let area = 0;
    let last = from;
    for (const e of events) {
      if (e.at >= to) break;
      if (e.at > from) {
        area += n * (e.at - last);
        last = e.at;
      }
      n += e.d;
    }
    area += n * (to - last);
    return area / (to - from);
  };
  let n = 0;
  let fullAt = NaN;
  for (const e of events) {
    n += e.d;
    if (n >= concurrency) {
      fullAt = e.at;
      break;
    }
  }
  const lastStart = Math.max(...calls.map((c) => c.start));
  const steadyFrom = Number.isNaN(fullAt) ? t0 : fullAt;
  const phase = (from: number, to: number): Phase => ({ ms: to - from, inFlight: mean(from, to) });
  return {
    firstCall: Math.min(...calls.map((c) => c.start)) - t0,
    ramp: phase(t0, steadyFrom),
    steady: phase(steadyFrom, lastStart),
    tail: phase(lastStart, drained),
    overall: phase(t0, drained),
    /** Calls started per second during the steady state. */
    steadyRate:
      (calls.filter((c) => c.start >= steadyFrom && c.start < lastStart).length / Math.max(1, lastStart - steadyFrom)) *
      1000,
  };
}

async function open(extra: Record<string, string>): Promise<{ running: RunningEngine; home: string }> {
  const home = mkdtempSync(join(tmpdir(), 'mnemos-bench-llm-'));
  const running = await startEngine({
    env: {
      MNEMOS_HOME: home,
      MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: model,
      MNEMOS_API_PORT: '0',
      MNEMOS_API_HOST: '127.0.0.1',
      MNEMOS_API_LOG_LEVEL: 'silent',
      ...extra,
    },
  });
  return { running, home };
}

async function retainOne(url: string, bank: string, content: string): Promise<number> {
  const started = performance.now();
  const r = await fetch(`${url}/v1/default/banks/${bank}/memories`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ content }),
  });
  await r.arrayBuffer();
  if (r.status !== 200) throw new Error(`retain answered ${r.status}`);
  return performance.now() - started;
}

async function main() {
  const fake = await fakeLlm();
  const plain = await open({});
  const llm = await open({
    MNEMOS_API_LLM_PROVIDER: 'openai',
    MNEMOS_API_LLM_MODEL: 'fake',
    MNEMOS_API_LLM_API_KEY: 'k',
    MNEMOS_API_LLM_BASE_URL: fake.url,
    MNEMOS_API_LLM_CONCURRENCY: String(CONCURRENCY),
  });
  try {
    // Warm both engines.
    for (let i = 0; i < 10; i++) {
      await retainOne(plain.running.url, 'warm', `warm-up memory ${i}`);
      await retainOne(llm.running.url, 'warm', `warm-up memory ${i}`);
    }
    // (2) Retain latency, interleaved; the LLM engine's extraction runs meanwhile.
    const without: number[] = [];
    const withLlm: number[] = [];
    for (let i = 0; i < (THROUGHPUT_ONLY ? 0 : MEMORIES); i++) {
      const text = `Latency sample ${i}: person ${i % 17} mentioned project ${i * 7} during the weekly sync.`;
      without.push(await retainOne(plain.running.url, 'latency', text));
      withLlm.push(await retainOne(llm.running.url, 'latency', text));
    }
    // Let the latency run's extraction drain before measuring throughput.
    const db = llm.running.engine.db;
    const pending = async () =>
      Number(
        (
          await db.query<{ n: string | number }>(`SELECT count(*) AS n FROM jobs WHERE status IN ('queued', 'running')`)
        )[0]?.n ?? 0,
      );
    while ((await pending()) > 0) await new Promise((r) => setTimeout(r, 100));

    // (1) Throughput: enqueue MEMORIES extractions at once (one batch retain), time until the queue is empty.
    const items = Array.from({ length: MEMORIES }, (_, i) => ({
      content: `Throughput memory ${i}: Ada ${i} likes tea number ${i * 3}.`,
    }));
    const loopDelay = monitorEventLoopDelay({ resolution: 5 });
    loopDelay.enable();
    const started = performance.now();
    const r = await fetch(`${llm.running.url}/v1/default/banks/throughput/memories`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items }),
    });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`batch retain answered ${r.status}`);
    const retained = performance.now() - started;
    // Polled every 50 ms: each poll is a query on the engine's own database (and thread).
    while ((await pending()) > 0) await new Promise((res) => setTimeout(res, 50));
    const drained = performance.now();
    loopDelay.disable();
    const elapsed = (drained - started) / 1000;
    const calls = await fake.callsSince(started);
    if (calls.length !== MEMORIES) throw new Error(`expected ${MEMORIES} LLM calls, saw ${calls.length}`);
    const p = profile(calls, started, drained, CONCURRENCY);
    // For a closer look at the gaps: the calls' server-side [start, end] in ms since the enqueueing request.
    if (process.env['MNEMOS_BENCH_DUMP_CALLS'])
      writeFileSync(
        process.env['MNEMOS_BENCH_DUMP_CALLS'],
        JSON.stringify(calls.map((c) => [c.start - started, c.end - started])),
      );
    const rate = MEMORIES / elapsed;
    const ideal = (CONCURRENCY * 1000) / DELAY_MS;
    const pct = (x: number) => `${((x / CONCURRENCY) * 100).toFixed(0)}%`;

    const p50a = percentile(without, 50);
    const p50b = percentile(withLlm, 50);
    console.log(
      `extraction throughput (${MEMORIES} memories, ${DELAY_MS} ms/call, concurrency ${CONCURRENCY}), end to end: ${rate.toFixed(1)}/s of ideal ${ideal.toFixed(1)}/s (${((rate / ideal) * 100).toFixed(0)}%); mean calls in flight ${p.overall.inFlight.toFixed(2)} of ${CONCURRENCY} over ${ms(p.overall.ms)}`,
    );
    console.log(
      `  steady state: mean calls in flight ${p.steady.inFlight.toFixed(2)} of ${CONCURRENCY} (${pct(p.steady.inFlight)}) over ${ms(p.steady.ms)}; ${p.steadyRate.toFixed(1)} calls started/s of ideal ${ideal.toFixed(1)}/s`,
    );
    console.log(
      `  ramp-up: ${ms(p.ramp.ms)} (batch retain of ${MEMORIES} answered after ${ms(retained)}, first LLM call at ${ms(p.firstCall)}), mean in flight ${p.ramp.inFlight.toFixed(2)}`,
    );
    console.log(
      `  event loop delay (engine and bench share the process): p50 ${ms(loopDelay.percentile(50) / 1e6)}, p99 ${ms(loopDelay.percentile(99) / 1e6)}, max ${ms(loopDelay.max / 1e6)}`,
    );
    console.log(
      `  tail: ${ms(p.tail.ms)} from the last call's start until the queue is empty (one call is ${DELAY_MS} ms), mean in flight ${p.tail.inFlight.toFixed(2)}`,
    );
    if (!THROUGHPUT_ONLY)
      console.log(
        `single retain p50: without LLM ${ms(p50a)}, with LLM ${ms(p50b)} (ratio ${(p50b / p50a).toFixed(2)}); p95 ${ms(percentile(without, 95))} vs ${ms(percentile(withLlm, 95))}`,
      );
  } finally {
    await llm.running.close();
    await plain.running.close();
    await fake.close();
    rmSync(llm.home, { recursive: true, force: true });
    rmSync(plain.home, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
