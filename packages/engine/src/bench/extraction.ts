#!/usr/bin/env node
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEngine, type RunningEngine } from '../index.js';
import { ms, percentile } from './stats.js';

/**
 * LLM-layer bars: (1) extraction throughput: the queue keeps the configured concurrency busy, measured against a local
 * OpenAI-compatible server that answers every call after a fixed delay (ideal = concurrency / delay); (2) single
 * retain latency with an LLM configured vs without (extraction is off the request path), interleaved on two engines.
 *
 *   node --conditions=source --import tsx packages/engine/src/bench/extraction.ts [--memories 200] [--delay-ms 200] [--concurrency 4]
 */

const here = fileURLToPath(new URL('.', import.meta.url));
const repoRoot = resolve(here, '../../../..');
const model = process.env['MNEMOS_API_EMBEDDINGS_LOCAL_MODEL'] ?? resolve(repoRoot, '../shared/models/all-MiniLM-L6-v2');

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  const v = i >= 0 ? Number(process.argv[i + 1]) : NaN;
  return Number.isFinite(v) && v > 0 ? Math.trunc(v) : fallback;
}
const MEMORIES = arg('--memories', 200);
const DELAY_MS = arg('--delay-ms', 200);
const CONCURRENCY = arg('--concurrency', 4);

/** A fixed-delay LLM: one fact per memory; tracks calls in flight over time. */
async function fakeLlm() {
  let inFlight = 0;
  let area = 0;
  let last = performance.now();
  const tick = () => {
    const now = performance.now();
    area += inFlight * (now - last);
    last = now;
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      tick();
      inFlight++;
      setTimeout(() => {
        tick();
        inFlight--;
        const content = JSON.stringify({ facts: [{ text: `Fact ${Math.random()}`, type: 'world', occurred_at: null, entities: [], supersedes: [] }] });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
          id: 'x', object: 'chat.completion', created: 0, model: 'fake',
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content, refusal: null } }],
          usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
        }));
      }, DELAY_MS);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  return {
    url: `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/v1`,
    /** Mean calls in flight between two marks. */
    mark: () => {
      tick();
      return { area, at: last };
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function open(extra: Record<string, string>): Promise<{ running: RunningEngine; home: string }> {
  const home = mkdtempSync(join(tmpdir(), 'mnemos-bench-llm-'));
  const running = await startEngine({
    env: { MNEMOS_HOME: home, MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: model, MNEMOS_API_PORT: '0', MNEMOS_API_HOST: '127.0.0.1', MNEMOS_API_LOG_LEVEL: 'silent', ...extra },
  });
  return { running, home };
}

async function retainOne(url: string, bank: string, content: string): Promise<number> {
  const started = performance.now();
  const r = await fetch(`${url}/v1/default/banks/${bank}/memories`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content }) });
  await r.arrayBuffer();
  if (r.status !== 200) throw new Error(`retain answered ${r.status}`);
  return performance.now() - started;
}

async function main() {
  const fake = await fakeLlm();
  const plain = await open({});
  const llm = await open({
    MNEMOS_API_LLM_PROVIDER: 'openai', MNEMOS_API_LLM_MODEL: 'fake', MNEMOS_API_LLM_API_KEY: 'k', MNEMOS_API_LLM_BASE_URL: fake.url,
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
    for (let i = 0; i < MEMORIES; i++) {
      const text = `Latency sample ${i}: person ${i % 17} mentioned project ${i * 7} during the weekly sync.`;
      without.push(await retainOne(plain.running.url, 'latency', text));
      withLlm.push(await retainOne(llm.running.url, 'latency', text));
    }
    // Let the latency run's extraction drain before measuring throughput.
    const db = llm.running.engine.db;
    const pending = async () => Number((await db.query<{ n: string | number }>(`SELECT count(*) AS n FROM jobs WHERE status IN ('queued', 'running')`))[0]?.n ?? 0);
    while ((await pending()) > 0) await new Promise((r) => setTimeout(r, 100));

    // (1) Throughput: enqueue MEMORIES extractions at once (one batch retain), time until the queue is empty.
    const items = Array.from({ length: MEMORIES }, (_, i) => ({ content: `Throughput memory ${i}: Ada ${i} likes tea number ${i * 3}.` }));
    const m0 = fake.mark();
    const started = performance.now();
    const r = await fetch(`${llm.running.url}/v1/default/banks/throughput/memories`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items }) });
    if (r.status !== 200) throw new Error(`batch retain answered ${r.status}`);
    while ((await pending()) > 0) await new Promise((res) => setTimeout(res, 20));
    const elapsed = (performance.now() - started) / 1000;
    const m1 = fake.mark();
    const busy = (m1.area - m0.area) / (m1.at - m0.at);
    const rate = MEMORIES / elapsed;
    const ideal = (CONCURRENCY * 1000) / DELAY_MS;

    const p50a = percentile(without, 50);
    const p50b = percentile(withLlm, 50);
    console.log(`extraction throughput (${MEMORIES} memories, ${DELAY_MS} ms/call, concurrency ${CONCURRENCY}): ${rate.toFixed(1)}/s of ideal ${ideal.toFixed(1)}/s (${((rate / ideal) * 100).toFixed(0)}%); mean calls in flight ${busy.toFixed(2)} of ${CONCURRENCY}`);
    console.log(`single retain p50: without LLM ${ms(p50a)}, with LLM ${ms(p50b)} (ratio ${(p50b / p50a).toFixed(2)}); p95 ${ms(percentile(without, 95))} vs ${ms(percentile(withLlm, 95))}`);
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
