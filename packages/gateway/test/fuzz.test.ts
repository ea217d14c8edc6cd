// test-runner: alone (it times how fast the server answers; other test files' CPU would blur that)
// Seeded fuzzing of the gateway's whole HTTP surface, with a real engine and the real PostgreSQL control plane behind
// it: every operation of its OpenAPI document (the account routes signed in by a console session, the /v1/me routes
// sometimes by that session too), /mcp with each MCP tool called by JSON-RPC tools/call with fuzzed arguments, and
// the OAuth endpoints (discovery, authorization and its resume, pushed authorization, token, revocation,
// introspection, dynamic registration and a registered client's read). Properties: no 5xx (503 llm_not_configured
// passed through from the engine aside: it has no LLM), no MCP tool result that reports a server failure, every error
// is problem+json with a code and a detail (on the OAuth endpoints RFC 6749's error JSON, the authorization error
// page, or problem+json), a rejected request changes nothing (control-plane rows, console sessions, issued tokens and
// grants, the project's memories and its usage), and /health/live keeps answering within 200 ms on its own
// connection. MNEMOS_FUZZ_SEED and MNEMOS_FUZZ_REQUESTS replay or lengthen a run.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, it } from 'node:test';
import pg from 'pg';
import {
  FUZZ_REQUESTS,
  FUZZ_SEED,
  fuzzAndCheck,
  MCP_ACCEPT,
  routesFromOpenApi,
  withoutAsync,
  type Rng,
  type RouteSpec,
} from '../../engine/test/helpers/fuzz.js';
import { mcpToolRoutes } from '../../engine/test/helpers/fuzz-mcp.js';
import {
  consoleProjectHeaders,
  oauthHeaders,
  oauthRoutes,
  prepareOAuthFixtures,
  restoreOAuthFixtures,
  type OAuthFixtures,
} from './fuzz-oauth.js';
import {
  ADMIN_TOKEN,
  ENGINE_TOKEN,
  call,
  obj,
  setupProject,
  startHarness,
  startTestEngine,
  type EngineHandle,
  type Harness,
} from './helpers.js';
import { PASSWORD } from './oauth-browser.js';

const ALL_SCOPES = [
  'memory:retain',
  'memory:recall',
  'memory:reflect',
  'memory:delete',
  'project:read',
  'project:write',
  'mcp',
];
const UNLIMITED = { memories: 10_000_000, recalls: 10_000_000, reflects: 10_000_000, requests_per_minute: 100_000_000 };

let engine: EngineHandle;
let h: Harness;
let db: pg.Client;
let key = '';
let tenant = '';
let victimProject = '';
let memoryId = '';
let oauth: OAuthFixtures;
let consoleDir = '';
const CONSOLE_EMAIL = 'console-fuzz@example.com';

before(async () => {
  engine = await startTestEngine();
  // A console build of its own, so /console is served whether or not the real one was built.
  consoleDir = await mkdtemp(path.join(tmpdir(), 'mnemos-fuzz-console-'));
  await writeFile(
    path.join(consoleDir, 'index.html'),
    '<!doctype html><html><body><div id="root"></div></body></html>',
  );
  await writeFile(path.join(consoleDir, 'app.js'), 'document.title = "Mnemos";');
  h = await startHarness(engine.url, {
    GATEWAY_CONSOLE_DIR: consoleDir,
    // The fuzz's wrong passwords all come from one address; the per-account pause still applies to the emails it tries.
    GATEWAY_SIGNIN_MAX_FAILURES_PER_ADDRESS: '100000',
  });
  db = new pg.Client({ connectionString: h.db.url });
  await db.connect();
  const main = await setupProject(h.url, { scopes: ALL_SCOPES, quotas: UNLIMITED, email: CONSOLE_EMAIL });
  key = main.key;
  const victim = await setupProject(h.url, { name: 'victim' });
  victimProject = victim.projectId;
  const { rows } = await db.query<{ tenant: string }>('SELECT tenant FROM projects WHERE id = $1', [main.projectId]);
  tenant = rows[0]!.tenant;
  const r = await call(h.url, 'POST', '/v1/me/banks/known/memories', {
    token: key,
    body: { items: [{ content: 'Ada drinks green tea every morning.' }, { content: 'Ada lives in Lisbon.' }] },
  });
  assert.equal(r.status, 200, r.text);
  memoryId = (obj(r.body)['memory_ids'] as string[])[0]!;
  oauth = await prepareOAuthFixtures(h.url, key, { email: CONSOLE_EMAIL, password: PASSWORD, project: main.projectId });
});
after(async () => {
  await db?.end();
  await h?.close();
  await engine?.close();
  await rm(consoleDir, { recursive: true, force: true });
});

/** Control-plane rows, console sessions, issued tokens and grants, the project's memories and its counted usage. */
async function snapshot(): Promise<string> {
  const { rows } = await db.query(`SELECT
    (SELECT md5(coalesce(string_agg(a::text, '|' ORDER BY a.id), '')) FROM accounts a) AS accounts,
    (SELECT count(*)::int FROM account_sessions) AS sessions,
    (SELECT count(*)::int FROM oauth_store WHERE model IN
       ('AccessToken', 'ClientCredentials', 'RefreshToken', 'AuthorizationCode', 'Grant')) AS tokens,
    (SELECT md5(coalesce(string_agg(p::text, '|' ORDER BY p.id), '')) FROM projects p) AS projects,
    (SELECT md5(coalesce(string_agg(concat_ws(',', k.id, k.name, k.scopes, k.banks, k.spaces, k.expires_at,
       k.revoked_at, k.rate_limit_per_minute), '|' ORDER BY k.id), '')) FROM api_keys k) AS keys,
    (SELECT md5(coalesce(string_agg(c.client_id || c.scopes::text || coalesce(c.name, ''), '|'
       ORDER BY c.client_id), '')) FROM oauth_clients c) AS clients`);
  const banks = await call(engine.url, 'GET', `/v1/${tenant}/banks?limit=1000`, { token: ENGINE_TOKEN });
  type BankRow = { bank_id: string; memory_count: number; last_write_at: string | null };
  const list = (obj(banks.body)['banks'] ?? []) as BankRow[];
  const usage = await call(h.url, 'GET', '/v1/me/usage', { token: key });
  return JSON.stringify({
    ...rows[0],
    banks: list.map((b) => `${b.bank_id}:${b.memory_count}:${b.last_write_at ?? ''}`).sort(),
    usage: [obj(usage.body)['memories'], obj(usage.body)['recalls'], obj(usage.body)['reflects']],
  });
}

function param(route: RouteSpec, name: string, rng: Rng): string {
  if (name === 'bank') return rng.pick(['known', 'known', 'fuzz', 'alice@example.com']);
  if (name === 'client_id') return rng.chance(0.9) ? oauth.publicClient.id : 'unknown-client';
  if (name === 'uid') return rng.chance(0.8) ? oauth.interaction : 'no-such-interaction';
  if (name === 'file') return rng.pick(['index.html', 'app.js', 'oauth', 'missing.js', '.env']);
  if (name === 'id' && route.path.startsWith('/v1/account/projects/')) {
    return rng.chance(0.8) ? oauth.console.project : victimProject;
  }
  if (name === 'space') return 'default';
  if (name === 'id' && route.path.startsWith('/admin/projects/')) return victimProject;
  if (name === 'id' && route.path.includes('/memories/')) return rng.chance(0.5) ? memoryId : rng.uuid();
  return rng.uuid();
}

const title = `survives ${FUZZ_REQUESTS} fuzzed requests (seed ${FUZZ_SEED}) with every property holding`;

/** Credentials per request: mostly the route's own, sometimes none, wrong or another route's. */
function headers(route: RouteSpec, rng: Rng): Record<string, string> {
  const own = oauthHeaders(oauth, route, rng);
  if (own !== undefined) return own;
  const admin = route.path.startsWith('/admin');
  const roll = rng.next();
  if (roll < 0.1 && route.path.startsWith('/v1/me/')) return consoleProjectHeaders(oauth);
  if (roll < 0.85) return { authorization: `Bearer ${admin ? ADMIN_TOKEN : key}` };
  if (roll < 0.9) return {};
  const wrong = ['Bearer mnm_live_notakey', 'Basic Zm9vOmJhcg==', 'Bearer', `Bearer ${key}x`];
  if (roll < 0.95) return { authorization: rng.pick(wrong) };
  return { authorization: `Bearer ${admin ? key : ADMIN_TOKEN}` };
}

it(title, { timeout: 20 * 60_000 }, async () => {
  const doc = await call(h.url, 'GET', '/openapi.json');
  assert.equal(doc.status, 200);
  const routes = routesFromOpenApi(doc.body as Parameters<typeof routesFromOpenApi>[0]).map(withoutAsync);
  const auth = { authorization: `Bearer ${key}` };
  // Hindsight clients reach the memory routes as the self-hosted tenant's paths too (hidden from the document).
  const aliases = routes
    .filter((r) => /^\/v1\/me\/(banks|spaces|operations)\b/.test(r.path))
    .map((r) => ({ ...r, path: r.path.replace('/v1/me/', '/v1/default/') }));
  const get = (path: string): RouteSpec => ({ method: 'GET', path, query: [], body: undefined });
  routes.push(
    ...aliases,
    get('/health'),
    get('/version'),
    get('/openapi.json'),
    get('/'),
    get('/console'),
    get('/console/{file}'),
    { method: 'POST', path: '/mcp', query: [], body: { type: 'object' }, headers: MCP_ACCEPT },
    { method: 'POST', path: '/mcp/{bank}', query: [], body: { type: 'object' }, headers: MCP_ACCEPT },
    ...(await mcpToolRoutes(h.url, '/mcp', '/mcp', auth)),
    ...(await mcpToolRoutes(h.url, '/mcp/known', '/mcp/{bank}', auth)),
    ...oauthRoutes(oauth),
  );
  await fuzzAndCheck('gateway', {
    base: h.url,
    routes,
    snapshot,
    ctx: { param: (name, rng, route) => param(route, name, rng), headers },
    afterAnswer: (route, answer) => restoreOAuthFixtures(oauth, route, answer),
  });
});
