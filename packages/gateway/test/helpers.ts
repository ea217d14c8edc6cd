// Test helpers: a fresh control-plane database per test file (real PostgreSQL 15), a real engine, a gateway in front.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { SCOPES, startGateway, type RunningGateway } from '@mnemos/gateway';
import { testModelDir, testPostgresUrl } from '../../engine/bench/test-assets.js';

export const PG_URL = testPostgresUrl();
export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const ENGINE_TOKEN = 'engine-token-for-tests';
/** How long a key made to test expiry lives: long enough to create and use it on a loaded machine. */
export const KEY_LIFETIME_MS = 5_000;
export const MODEL_DIR = testModelDir();

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A connection to the test server's maintenance database, with time limits so that an unreachable or stalled server
 * fails the file with a message instead of hanging the run.
 */
async function connectAdmin(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 15_000, query_timeout: 60_000 });
  try {
    await client.connect();
  } catch (error) {
    const reason = (error as Error).message;
    throw new Error(`cannot reach the test PostgreSQL at ${PG_URL} (${reason}); set MNEMOS_TEST_PG_URL`);
  }
  return client;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `gw_test_${randomBytes(6).toString('hex')}`;
  const admin = await connectAdmin();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(PG_URL);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const c = await connectAdmin();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export interface EngineHandle {
  url: string;
  close(): Promise<void>;
}

/**
 * A real engine (embedded database, local model) serving many tenants behind ENGINE_TOKEN, or, with `open`, the
 * single-tenant engine that needs no token: the engine tests' own (its home seeded with the migrated database, the
 * model shared by the process's engines). Imported when first needed: most gateway test files start no engine.
 */
export async function startTestEngine({ open = false } = {}): Promise<EngineHandle> {
  const engineTests = await import('../../engine/test/helpers/engine.js');
  const engine = await engineTests.startTestEngine(open ? {} : { MNEMOS_API_AUTH_TOKEN: ENGINE_TOKEN });
  return { url: engine.url, close: () => engine.dispose() };
}

export interface Harness {
  gw: RunningGateway;
  db: TestDatabase;
  url: string;
  close(): Promise<void>;
}

export async function startHarness(engineUrl: string, env: Record<string, string> = {}): Promise<Harness> {
  const db = await createTestDatabase();
  const gw = await startGateway({
    env: {
      GATEWAY_DATABASE_URL: db.url,
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      GATEWAY_ENGINE_URL: engineUrl,
      GATEWAY_ENGINE_TOKEN: ENGINE_TOKEN,
      GATEWAY_PORT: '0',
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_LOG_LEVEL: 'silent',
      ...env,
    },
  });
  return {
    gw,
    db,
    url: gw.url,
    async close() {
      await gw.close();
      await db.drop();
    },
  };
}

export interface Res {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

export async function call(
  base: string,
  method: string,
  p: string,
  opts: { token?: string; body?: unknown; headers?: Record<string, string>; raw?: string } = {},
): Promise<Res> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token !== undefined) headers['authorization'] = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.raw !== undefined) {
    body = opts.raw;
    headers['content-type'] ??= 'application/json';
  } else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] = 'application/json';
  }
  return toRes(await fetch(`${base}${p}`, { method, headers, body, redirect: 'manual' }));
}

/** Reads an answer whole: its body parsed as JSON when it is JSON, else kept as text. */
export async function toRes(res: Response): Promise<Res> {
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

export type Json = Record<string, unknown>;
export const obj = (v: unknown): Json => (v !== null && typeof v === 'object' ? (v as Json) : {});

/** Creates an account, a project and a key with the given scopes through the admin API. */
export async function setupProject(
  base: string,
  opts: {
    name?: string;
    plan?: string;
    scopes?: string[];
    banks?: string[];
    spaces?: string[];
    quotas?: Json;
    email?: string;
    password?: string;
  } = {},
): Promise<{ projectId: string; key: string; accountId: string }> {
  const email = opts.email ?? `u${randomBytes(4).toString('hex')}@example.com`;
  const acc = await call(base, 'POST', '/admin/accounts', {
    token: ADMIN_TOKEN,
    body: { email, password: opts.password ?? 'correct horse battery' },
  });
  if (acc.status !== 201) throw new Error(`account: ${acc.status} ${acc.text}`);
  const accountId = String(obj(acc.body)['id']);
  const prj = await call(base, 'POST', '/admin/projects', {
    token: ADMIN_TOKEN,
    body: { name: opts.name ?? 'p', account_id: accountId, ...(opts.plan === undefined ? {} : { plan: opts.plan }) },
  });
  if (prj.status !== 201) throw new Error(`project: ${prj.status} ${prj.text}`);
  const projectId = String(obj(prj.body)['id']);
  if (opts.quotas !== undefined) {
    const patched = await call(base, 'PATCH', `/admin/projects/${projectId}`, {
      token: ADMIN_TOKEN,
      body: { quotas: opts.quotas },
    });
    if (patched.status !== 200) throw new Error(`patch: ${patched.status} ${patched.text}`);
  }
  // Test projects get a key with every scope unless told otherwise (new keys default to the memory scopes only).
  const keyBody: Json = { scopes: opts.scopes ?? [...SCOPES] };
  if (opts.banks !== undefined) keyBody['banks'] = opts.banks;
  if (opts.spaces !== undefined) keyBody['spaces'] = opts.spaces;
  const key = await call(base, 'POST', `/admin/projects/${projectId}/keys`, { token: ADMIN_TOKEN, body: keyBody });
  if (key.status !== 201) throw new Error(`key: ${key.status} ${key.text}`);
  return { projectId, key: String(obj(key.body)['key']), accountId };
}

/** Asserts the shape of a problem+json answer. */
export function isProblem(res: Res, status: number, code?: string): boolean {
  const b = obj(res.body);
  return (
    res.status === status &&
    (res.headers.get('content-type') ?? '').startsWith('application/problem+json') &&
    typeof b['type'] === 'string' &&
    typeof b['title'] === 'string' &&
    b['status'] === status &&
    typeof b['detail'] === 'string' &&
    typeof b['code'] === 'string' &&
    (code === undefined || b['code'] === code)
  );
}
