// Gateway overhead benchmark (its bars): recall p50 through the gateway vs the same engine called directly, in the
// same run (interleaved, sequential), and 1,000 concurrent authenticated requests without an error.
// Run (needs the engine's dist): MNEMOS_TEST_PG_URL=postgres://... node --conditions=source --import tsx packages/gateway/bench/overhead.ts
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { startGateway } from '../src/app.js';

interface EngineModule {
  spawnEngineProcess: (env: Record<string, string>) => Promise<{ url: string; stop(): Promise<void> }>;
}
interface TestAssetsModule {
  testModelDir: () => string;
}

const PG_URL = process.env['MNEMOS_TEST_PG_URL'] ?? 'postgres://postgres:postgres@127.0.0.1:5432/postgres';
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 300);
const CONCURRENT = Number(process.env['BENCH_CONCURRENT'] ?? 1000);
const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../../..');

function pct(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

async function post(
  url: string,
  token: string,
  body: unknown,
): Promise<{ status: number; ms: number; gw?: number; text?: string }> {
  const t0 = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const gw = /gateway;dur=([0-9.]+)/.exec(res.headers.get('server-timing') ?? '')?.[1];
  return {
    status: res.status,
    ms: performance.now() - t0,
    ...(gw === undefined ? {} : { gw: Number(gw) }),
    ...(res.status === 200 ? {} : { text: text.slice(0, 300) }),
  };
}

async function main(): Promise<void> {
  const home = await mkdtemp(path.join(tmpdir(), 'mnemos-gw-bench-'));
  const dbName = `gw_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const dbUrl = new URL(PG_URL);
  dbUrl.pathname = `/${dbName}`;
  const engineToken = 'bench-engine-token';
  const adminToken = 'bench-admin-token-0123456789';
  // The engine runs in its own process, as deployed (its compiled dist/cli.js, also when this bench runs from source),
  // so the gateway's figure is its own work, not queueing behind the engine's embedding on a shared event loop.
  const specifier = pathToFileURL(path.resolve(repoRoot, 'packages/engine/dist/process.js')).href;
  const { spawnEngineProcess } = (await import(specifier)) as EngineModule;
  const assets = pathToFileURL(path.resolve(repoRoot, 'packages/engine/bench/test-assets.ts')).href;
  const { testModelDir } = (await import(assets)) as TestAssetsModule;
  const engine = await spawnEngineProcess({
    MNEMOS_HOME: home,
    MNEMOS_API_AUTH_TOKEN: engineToken,
    MNEMOS_API_PORT: '0',
    MNEMOS_API_HOST: '127.0.0.1',
    MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: testModelDir(),
  });
  const gw = await startGateway({
    env: {
      GATEWAY_DATABASE_URL: dbUrl.toString(),
      GATEWAY_ADMIN_TOKEN: adminToken,
      GATEWAY_ENGINE_URL: engine.url,
      GATEWAY_ENGINE_TOKEN: engineToken,
      GATEWAY_PORT: '0',
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_LOG_LEVEL: 'silent',
    },
  });
  try {
    const api = async (method: string, p: string, body?: unknown): Promise<Record<string, unknown>> => {
      const res = await fetch(`${gw.url}${p}`, {
        method,
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return (await res.json()) as Record<string, unknown>;
    };
    const project = await api('POST', '/admin/projects', { name: 'bench', plan: 'scale' });
    const projectId = String(project['id']);
    await api('PATCH', `/admin/projects/${projectId}`, {
      quotas: { requests_per_minute: 10_000_000, recalls: 10_000_000 },
    });
    const key = String((await api('POST', `/admin/projects/${projectId}/keys`, {}))['key']);
    const tenant = String(project['tenant']);

    const items = Array.from({ length: 200 }, (_, i) => ({
      content: `Benchmark memory ${i}: the user mentioned topic ${i % 17} and place ${i % 23}.`,
    }));
    for (let i = 0; i < items.length; i += 50) {
      const r = await post(`${gw.url}/v1/me/banks/bench/memories`, key, { items: items.slice(i, i + 50) });
      if (r.status !== 200) throw new Error(`retain failed: ${r.status}`);
    }
    const direct = `${engine.url}/v1/${tenant}/banks/bench/memories/recall`;
    const via = `${gw.url}/v1/me/banks/bench/memories/recall`;
    for (let i = 0; i < 30; i++) {
      await post(direct, engineToken, { query: `warm ${i}` });
      await post(via, key, { query: `warm ${i}` });
    }
    const d: number[] = [];
    const g: number[] = [];
    const pre: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const q = { query: `what did the user say about topic ${i % 17}?` };
      // Alternate the order so neither side benefits systematically from a warmer cache.
      if (i % 2 === 0) {
        d.push((await post(direct, engineToken, q)).ms);
        const r = await post(via, key, q);
        g.push(r.ms);
        pre.push(r.gw ?? NaN);
      } else {
        const r = await post(via, key, q);
        g.push(r.ms);
        pre.push(r.gw ?? NaN);
        d.push((await post(direct, engineToken, q)).ms);
      }
    }
    const overhead = pct(g, 50) - pct(d, 50);

    const t0 = performance.now();
    const results = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) =>
        post(via, key, { query: `concurrent question ${i % 50}` }).catch((err: unknown) => ({
          status: 0,
          ms: 0,
          text: `${String(err)} ${String((err as { cause?: unknown }).cause)}`,
        })),
      ),
    );
    const wall = performance.now() - t0;
    const errors = results.filter((r) => r.status !== 200).length;
    const statuses: Record<string, number> = {};
    for (const r of results) statuses[String(r.status)] = (statuses[String(r.status)] ?? 0) + 1;

    const firstError = results.find((r) => r.status !== 200);
    if (firstError !== undefined) process.stderr.write(`first error: ${firstError.status} ${firstError.text ?? ''}\n`);
    const out = {
      rounds: ROUNDS,
      recall_direct_ms: { p50: +pct(d, 50).toFixed(2), p95: +pct(d, 95).toFixed(2) },
      recall_gateway_ms: { p50: +pct(g, 50).toFixed(2), p95: +pct(g, 95).toFixed(2) },
      overhead_p50_ms: +overhead.toFixed(2),
      gateway_pre_forward_ms: { p50: +pct(pre, 50).toFixed(2), p95: +pct(pre, 95).toFixed(2) },
      overhead_bar_ms: 3,
      overhead_ok: overhead <= 3,
      concurrent: { requests: CONCURRENT, errors, statuses, wall_ms: +wall.toFixed(0), ok: errors === 0 },
    };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    if (!out.overhead_ok || !out.concurrent.ok) process.exitCode = 1;
  } finally {
    await gw.close();
    await engine.stop();
    await rm(home, { recursive: true, force: true });
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await c.end();
  }
}

void main();
