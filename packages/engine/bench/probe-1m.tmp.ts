import { readFileSync } from 'node:fs';
import { spawnEngineProcess } from '../src/process.js';
import { JsonClient } from './http-json.js';
import { benchModelDir } from './local-model.js';
import { loadLocomoText } from './locomo-text.js';

const t0 = performance.now();
const engine = await spawnEngineProcess({
  MNEMOS_HOME: '/work/scale-home', MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: benchModelDir(), MNEMOS_API_PORT: '0',
  MNEMOS_API_HOST: '127.0.0.1', MNEMOS_API_LOG_LEVEL: 'info', MNEMOS_API_RECALL_CACHE_MIB: '512',
});
console.log('ready', (performance.now() - t0).toFixed(0));
const http = new JsonClient(1);
const locomo = loadLocomoText();
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${engine.child.pid}/status`, 'utf8'))![1]) / 1024;
let t = performance.now();
await http.post(`${engine.url}/v1/default/banks/scale-0/memories/recall`, { query: 'hello' });
console.log('first', (performance.now() - t).toFixed(0), 'rss', rss().toFixed(0));
const sums = new Map<string, number[]>();
for (let i = 0; i < 100; i++) {
  const a = await http.post(`${engine.url}/v1/default/banks/scale-0/memories/recall`, { query: locomo.questions[(i * 7) % locomo.questions.length], trace: true });
  const trace = a.json.trace as { stages: Array<{ stage: string; ms: number; candidates?: number }>; total_ms: number };
  for (const s of [...trace.stages, { stage: 'total', ms: trace.total_ms }]) (sums.get(s.stage) ?? sums.set(s.stage, []).get(s.stage)!).push(s.ms);
}
const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * p)]!;
console.log([...sums].map(([k, v]) => `${k} ${q(v, 0.5).toFixed(1)}/${q(v, 0.95).toFixed(1)}`).join(', '));
console.log('rss', rss().toFixed(0));
const m = await fetch(`${engine.url}/metrics`).then((r) => r.text());
console.log(m.split('\n').filter((l) => /recall_tier|cache/.test(l) && !l.startsWith('#')).join('\n'));
http.close();
await engine.stop();
