import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { runFuzz, routesFromOpenApi, withoutAsync } from './helpers/fuzz.js';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';

/**
 * Seeded fuzzing of the engine's whole HTTP surface, built from its OpenAPI document (plus the hidden MCP paths).
 * Properties: no 5xx (503 llm_not_configured aside: this engine has no LLM), every error is problem+json with a code
 * and a detail, a rejected request changes nothing, and /health/live keeps answering within 200 ms on its own
 * connection. MNEMOS_FUZZ_SEED and MNEMOS_FUZZ_REQUESTS replay or lengthen a run.
 */

const SEED = Number(process.env['MNEMOS_FUZZ_SEED'] ?? 20261124);
const REQUESTS = Number(process.env['MNEMOS_FUZZ_REQUESTS'] ?? 3000);
const LIVENESS_LIMIT_MS = 200;

let engine: TestEngine;
let memoryId = '';

before(async () => {
  engine = await startTestEngine();
  const r = await call<{ memory_ids: string[] }>(engine.url, 'POST', '/v1/default/banks/known/memories', {
    items: [{ content: 'Ada drinks green tea every morning.' }, { content: 'Ada lives in Lisbon.', tags: ['home'] }],
  });
  memoryId = r.body.memory_ids[0]!;
});
after(async () => {
  await engine?.dispose();
});

async function snapshot(): Promise<string> {
  const [row] = await engine.engine.db.query<Record<string, unknown>>(
    `SELECT (SELECT count(*)::int FROM memories) AS m, (SELECT count(*)::int FROM banks) AS b,
            (SELECT max(updated_at)::text FROM memories) AS mu, (SELECT max(updated_at)::text FROM banks) AS bu`,
  );
  return JSON.stringify(row);
}

it(`survives ${REQUESTS} fuzzed requests (seed ${SEED}) with every property holding`, { timeout: 15 * 60_000 }, async () => {
  const doc = await call<Parameters<typeof routesFromOpenApi>[0]>(engine.url, 'GET', '/openapi.json');
  const routes = routesFromOpenApi(doc.body, (path) => path.startsWith('/docs')).map(withoutAsync);
  const accept = { accept: 'application/json, text/event-stream' };
  routes.push(
    { method: 'POST', path: '/mcp/{bank}', query: [], body: { type: 'object' }, headers: accept },
    { method: 'POST', path: '/v1/{tenant}/mcp', query: [], body: { type: 'object' }, headers: accept },
  );
  assert.ok(routes.length > 20, `routes from /openapi.json: ${routes.length}`);
  const { stats, failures } = await runFuzz({
    base: engine.url,
    routes,
    seed: SEED,
    requests: REQUESTS,
    livenessPath: '/health/live',
    snapshot,
    ctx: {
      param: (name, rng) => {
        switch (name) {
          case 'tenant': return rng.chance(0.9) ? 'default' : rng.pick(['retain', 'recall', 'other']);
          case 'bank': return rng.pick(['known', 'known', 'fuzz', 'alice@example.com']);
          case 'space': return 'default';
          case 'id': return rng.chance(0.5) ? memoryId : rng.uuid();
          default: return 'x';
        }
      },
      headers: () => ({}),
    },
    allowedServerError: (answer) => answer.status === 503 && answer.text.includes('"llm_not_configured"'),
  });
  console.log(`engine fuzz: ${JSON.stringify(stats)}`);
  assert.deepEqual(failures, []);
  assert.equal(stats.requests, REQUESTS);
  assert.ok(stats.livenessProbes > 0);
  assert.ok(stats.slowestLivenessMs <= LIVENESS_LIMIT_MS, `slowest /health/live: ${stats.slowestLivenessMs} ms`);
});
