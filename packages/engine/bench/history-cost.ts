/**
 * `npm run bench:history`: what keeping a memory's history costs a write. One engine (`mnemos serve`, its own embedded
 * database, the local model) holds two banks, one with `history: "on"` and one with `history: "off"`; the same LoCoMo
 * turns are retained one per call into each, in pairs (the "on" bank first on even pairs, the "off" bank on odd ones),
 * after a few warm-up calls. Printed: single-retain p50/p95 per bank and the on/off ratio of the medians with a
 * bootstrap 95% interval over the pairs. Options: --retains N (pairs, default 200), --json <file>.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { spawnEngineProcess } from '../src/process.js';
import { JsonClient } from './http-json.js';
import { benchModelDir } from './local-model.js';
import { loadLocomoText } from './locomo-text.js';
import { measurePair, pairedMedianRatio, type Pair } from './paired.js';
import { percentile } from './stats.js';

const WARM_UP = 10;

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const RETAINS = Number(args.get('retains') ?? 200);
const JSON_OUT = args.get('json');

async function main(): Promise<void> {
  const home = mkdtempSync(path.join(tmpdir(), 'mnemos-bench-history-'));
  const engine = await spawnEngineProcess({
    MNEMOS_HOME: home,
    MNEMOS_API_PORT: '0',
    MNEMOS_API_HOST: '127.0.0.1',
    MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: benchModelDir(),
  });
  const client = new JsonClient(2);
  try {
    const bank = { base: 'history-off', head: 'history-on' } as const;
    for (const [side, setting] of [
      ['base', 'off'],
      ['head', 'on'],
    ] as const) {
      const put = await client.put(`${engine.url}/v1/default/banks/${bank[side]}`, { history: setting });
      if (put.status !== 200) throw new Error(`PUT bank answered ${put.status}`);
    }
    const turns = loadLocomoText().turns;
    const pairs: Pair[] = [];
    for (let i = 0; i < WARM_UP + RETAINS; i++) {
      const content = turns[i % turns.length]!;
      const pair = await measurePair(i, async (side) => {
        const started = performance.now();
        const r = await client.post(`${engine.url}/v1/default/banks/${bank[side]}/memories`, { content });
        if (r.status !== 200) throw new Error(`retain answered ${r.status}`);
        return performance.now() - started;
      });
      if (i >= WARM_UP) pairs.push(pair);
    }
    const of = (side: 'base' | 'head') => {
      const values = pairs.map((p) => p[side]);
      return { p50: percentile(values, 50), p95: percentile(values, 95) };
    };
    const result = {
      retains: pairs.length,
      off: of('base'),
      on: of('head'),
      on_over_off_p50: pairedMedianRatio(pairs),
    };
    const r = result.on_over_off_p50;
    console.log(`single retain, history off: p50 ${result.off.p50.toFixed(2)} ms, p95 ${result.off.p95.toFixed(2)} ms`);
    console.log(`single retain, history on:  p50 ${result.on.p50.toFixed(2)} ms, p95 ${result.on.p95.toFixed(2)} ms`);
    console.log(
      `on/off p50: ${r.ratio.toFixed(3)} (95% CI ${r.low.toFixed(3)}-${r.high.toFixed(3)}, ${pairs.length} pairs)`,
    );
    if (JSON_OUT) writeFileSync(JSON_OUT, JSON.stringify(result, null, 2));
  } finally {
    client.close();
    await engine.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

await main();
