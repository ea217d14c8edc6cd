// test-runner: alone (it times how fast the server answers; other test files' CPU would blur that)
import { after, before, it } from 'node:test';
import {
  FUZZ_REQUESTS,
  FUZZ_SEED,
  fuzzAndCheck,
  MCP_ACCEPT,
  routesFromOpenApi,
  withoutAsync,
  type RouteSpec,
} from './helpers/fuzz.js';
import { mcpToolRoutes } from './helpers/fuzz-mcp.js';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';

/**
 * Seeded fuzzing of the engine's whole HTTP surface, built from its OpenAPI document, plus the hidden MCP paths and
 * each MCP tool called by JSON-RPC tools/call with fuzzed arguments (on the tenant path, the default path and a path
 * that fixes the bank). Properties: no 5xx (503 llm_not_configured aside: this engine has no LLM), no tool result that
 * reports a server failure, every error is problem+json with a code and a detail, a rejected request (or a refused tool
 * call) changes nothing, and /health/live keeps answering within 200 ms on its own connection. MNEMOS_FUZZ_SEED and
 * MNEMOS_FUZZ_REQUESTS replay or lengthen a run.
 */

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
  const [row] = await engine.engine.db.query(
    `SELECT (SELECT count(*)::int FROM memories) AS m, (SELECT count(*)::int FROM banks) AS b,
            (SELECT max(updated_at)::text FROM memories) AS mu, (SELECT max(updated_at)::text FROM banks) AS bu`,
  );
  return JSON.stringify(row);
}

const title = `survives ${FUZZ_REQUESTS} fuzzed requests (seed ${FUZZ_SEED}) with every property holding`;

it(title, { timeout: 15 * 60_000 }, async () => {
  const doc = await call<Parameters<typeof routesFromOpenApi>[0]>(engine.url, 'GET', '/openapi.json');
  const routes = routesFromOpenApi(doc.body, (path) => path.startsWith('/docs')).map(withoutAsync);
  const get = (path: string): RouteSpec => ({ method: 'GET', path, query: [], body: undefined });
  routes.push(
    get('/openapi.json'),
    get('/docs'),
    get('/docs/{file}'),
    { method: 'POST', path: '/mcp/{bank}', query: [], body: { type: 'object' }, headers: MCP_ACCEPT },
    { method: 'POST', path: '/v1/{tenant}/mcp', query: [], body: { type: 'object' }, headers: MCP_ACCEPT },
    ...(await mcpToolRoutes(engine.url, '/v1/default/mcp', '/v1/{tenant}/mcp', {})),
    ...(await mcpToolRoutes(engine.url, '/mcp', '/mcp', {})),
    ...(await mcpToolRoutes(engine.url, '/mcp/known', '/mcp/{bank}', {})),
  );
  await fuzzAndCheck('engine', {
    base: engine.url,
    routes,
    snapshot,
    ctx: {
      param: (name, rng) => {
        switch (name) {
          case 'tenant':
            return rng.chance(0.9) ? 'default' : rng.pick(['retain', 'recall', 'other']);
          case 'bank':
            return rng.pick(['known', 'known', 'fuzz', 'alice@example.com']);
          case 'space':
            return 'default';
          case 'id':
            return rng.chance(0.5) ? memoryId : rng.uuid();
          case 'file':
            return rng.pick(['index.html', 'swagger-ui.css', 'static/index.html', 'missing.js', 'json']);
          default:
            return 'x';
        }
      },
      headers: () => ({}),
    },
  });
});
