#!/usr/bin/env node
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEngine, type RecallQuery, type RetainItem, type RunningEngine } from '../src/index.js';
import { testModelDir } from './test-assets.js';
import { rng } from './synthetic.js';
import { percentile } from './stats.js';

/**
 * Encryption-at-rest overhead (bars: recall p50 with encryption <= 1.15x without, retain throughput
 * >= 0.85x), in one run on the same data: two engines (plaintext and encrypted, each with its own embedded database
 * and the local model) get the same memories in batches of 32, interleaved batch by batch, then the same queries,
 * interleaved query by query. Timings are in-process (retain/recall functions, no HTTP), so the ratio is the codec's
 * cost plus noise.
 *
 *   node --conditions=source --import tsx packages/engine/bench/encryption.ts [--memories 2000] [--queries 200]
 */

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  const v = i >= 0 ? Number(process.argv[i + 1]) : NaN;
  return Number.isFinite(v) && v > 0 ? Math.trunc(v) : fallback;
}

const PEOPLE = ['Alice', 'Bob', 'Carol', 'Dave', 'Erin', 'Frank', 'Grace', 'Heidi', 'Ivan', 'Judy'];
const VERBS = ['likes', 'visited', 'is learning', 'bought', 'fixed', 'wrote about', 'is planning', 'recommended'];
const THINGS = [
  'sourdough bread',
  'the Berlin marathon',
  'Rust programming',
  'a vintage bicycle',
  'the garden fence',
  'jazz records',
  'a trip to Lisbon',
  'the quarterly budget',
  'green tea',
  'a chess opening',
  'the team offsite',
  'kayaking',
];
const WHEN = ['last week', 'on Sunday', 'every morning', 'in March', 'after work', 'since 2019', 'twice a month'];

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const memoryText = (r: () => number, i: number) =>
  `${pick(r, PEOPLE)} ${pick(r, VERBS)} ${pick(r, THINGS)} ${pick(r, WHEN)} (note ${i}).`;
const queryText = (r: () => number) => `What does ${pick(r, PEOPLE)} think about ${pick(r, THINGS)}?`;

async function main(): Promise<void> {
  const memories = arg('--memories', 2000);
  const queries = arg('--queries', 200);
  const model = testModelDir();
  const homes = [mkdtempSync(join(tmpdir(), 'mnemos-bench-plain-')), mkdtempSync(join(tmpdir(), 'mnemos-bench-enc-'))];
  const env = (home: string, extra: Record<string, string> = {}) => ({
    MNEMOS_HOME: home,
    MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: model,
    MNEMOS_API_PORT: '0',
    MNEMOS_API_HOST: '127.0.0.1',
    MNEMOS_API_LOG_LEVEL: 'silent',
    ...extra,
  });
  const engines: RunningEngine[] = [
    await startEngine({ env: env(homes[0]!) }),
    await startEngine({
      env: env(homes[1]!, { MNEMOS_API_ENCRYPTION_MASTER_KEY: Buffer.alloc(32, 42).toString('base64') }),
    }),
  ];
  try {
    const r = rng(7);
    const texts = Array.from({ length: memories }, (_, i) => memoryText(r, i));
    const retainSeconds = [0, 0];
    for (let start = 0; start < texts.length; start += 32) {
      const items: RetainItem[] = texts.slice(start, start + 32).map((content) => ({
        content,
        timestamp: undefined,
        context: 'bench',
        metadata: { source: 'bench' },
        tags: undefined,
        documentId: undefined,
        entities: undefined,
      }));
      // Alternate which engine goes first so neither always runs on a warmer cache.
      const order = (start / 32) % 2 === 0 ? [0, 1] : [1, 0];
      for (const e of order) {
        const engine = engines[e]!.engine;
        const t0 = performance.now();
        const partition = { tenant: 'default', bankId: 'bench', space: 'default' };
        await engine.service.retain({ partition, items, async: false, maxNewMemories: undefined });
        retainSeconds[e]! += (performance.now() - t0) / 1000;
      }
    }
    const qs = Array.from({ length: queries }, () => queryText(r));
    const latencies: number[][] = [[], []];
    const request = (query: string): RecallQuery => ({
      tenant: 'default',
      bankId: 'bench',
      space: 'default',
      query,
      maxTokens: 4096,
      budget: 'mid',
      includeOrg: false,
      types: undefined,
      tags: undefined,
      tagsMatch: 'any',
      queryTimestamp: new Date(),
      trace: false,
    });
    for (const [i, q] of [...qs.slice(0, 20), ...qs].entries()) {
      const order = i % 2 === 0 ? [0, 1] : [1, 0];
      for (const e of order) {
        const engine = engines[e]!.engine;
        const t0 = performance.now();
        await engine.service.recall(request(q));
        if (i >= 20) latencies[e]!.push(performance.now() - t0); // the first 20 are warm-up
      }
    }
    const [plainRate, encRate] = retainSeconds.map((s) => memories / s) as [number, number];
    const [plainP50, encP50] = latencies.map((l) => percentile(l, 50)) as [number, number];
    const [plainP95, encP95] = latencies.map((l) => percentile(l, 95)) as [number, number];
    const report = {
      memories,
      queries,
      retain_per_second: {
        plaintext: round(plainRate),
        encrypted: round(encRate),
        ratio: round(encRate / plainRate, 3),
        bar: '>= 0.85',
      },
      recall_p50_ms: {
        plaintext: round(plainP50, 2),
        encrypted: round(encP50, 2),
        ratio: round(encP50 / plainP50, 3),
        bar: '<= 1.15',
      },
      recall_p95_ms: { plaintext: round(plainP95, 2), encrypted: round(encP95, 2) },
    };
    console.log(JSON.stringify(report, null, 2));
  } finally {
    for (const e of engines) await e.close();
    for (const h of homes) rmSync(h, { recursive: true, force: true });
  }
}

function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
