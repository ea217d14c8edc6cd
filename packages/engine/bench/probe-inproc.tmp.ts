import { loadEngineConfig } from '../src/config/load.js';
import { Engine } from '../src/engine.js';
import { benchModelDir } from './local-model.js';
import { loadLocomoText } from './locomo-text.js';
const quiet = { info: () => undefined, warn: () => undefined, error: (m: string) => console.error(m) };
const engine = await Engine.open(loadEngineConfig({ MNEMOS_HOME: '/work/scale-home', MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: benchModelDir(), MNEMOS_API_RECALL_CACHE_MIB: '512' }), quiet);
const locomo = loadLocomoText();
const svc = engine.service;
const req = (query: string) => ({ tenant: 'default', bankId: 'scale-0', space: 'default', query, budget: 'mid' as const, maxTokens: 4096, includeOrg: false, types: undefined, tags: undefined, tagsMatch: 'any' as const, queryTimestamp: new Date(), trace: true });
let t = performance.now();
await svc.recall(req('hello'));
console.error('first', (performance.now() - t).toFixed(0));
for (let i = 0; i < 30; i++) {
  await svc.recall(req(locomo.questions[(i * 7) % locomo.questions.length]!));
}
await engine.close();
