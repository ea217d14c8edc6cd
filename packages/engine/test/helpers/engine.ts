import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testModelDir } from '../../bench/test-assets.js';
import { testHomesRoot } from './homes-root.js';
import { seedEmbeddedDatabase, type SeedStage } from './pristine-database.js';
import { createEmbedder, type Embedder } from '../../src/embeddings/index.js';
import { loadEngineConfig, startEngine, type RunningEngine, type StartEngineOptions } from '../../src/index.js';

const here = fileURLToPath(new URL('.', import.meta.url));
/** The repository root (three levels above this helpers folder). */
export const REPO_ROOT = resolve(here, '../../../..');
/** The real embedding model (MNEMOS_TEST_MODEL; never copied into the repository). */
export const MODEL_DIR = testModelDir();

/**
 * A fresh home folder for an engine, its embedded database already migrated, as an engine's first start leaves it (see
 * pristine-database.ts); `{ database: 'initdb' }` gives a never-migrated database, and `{ database: 'none' }` leaves the
 * folder empty, for tests of a first start that creates the database itself.
 */
export function tempHome(
  prefix = 'mnemos-test-',
  options: { database?: SeedStage | 'none' } = {},
): { path: string; remove(): void } {
  const path = mkdtempSync(join(testHomesRoot(), prefix));
  if (options.database !== 'none') seedEmbeddedDatabase(path, options.database);
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export function testEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    MNEMOS_HOME: home,
    MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: MODEL_DIR,
    MNEMOS_API_PORT: '0',
    MNEMOS_API_HOST: '127.0.0.1',
    MNEMOS_API_LOG_LEVEL: 'silent',
    ...extra,
  };
}

export interface TestEngine extends RunningEngine {
  home: string;
  /** Stops the engine and removes its home folder. */
  dispose(): Promise<void>;
}

let sharedModel: Promise<Embedder> | undefined;

/**
 * The real model, loaded once per test process and shared by the engines startTestEngine starts with the default
 * model: each load is a new thread and about a second and a half of CPU, and the engines of one file never need
 * models of their own. An engine closing it leaves it loaded for the next; the thread holds the process open only
 * while it works, so the process still ends when its tests do.
 */
export function sharedLocalModel(): Promise<Embedder> {
  sharedModel ??= createEmbedder(loadEngineConfig(testEnv(tmpdir())).embeddings, tmpdir(), () => undefined).then(
    (model) => ({
      id: model.id,
      dimension: model.dimension,
      embed: (texts, kind) => model.embed(texts, kind),
      close: async () => undefined,
    }),
  );
  return sharedModel;
}

/**
 * A real engine (PGlite, the real model, real HTTP on a free port) in a fresh home folder. Engines with the default
 * model share one loaded model (sharedLocalModel); one given other MNEMOS_API_EMBEDDINGS_* settings loads its own.
 */
export async function startTestEngine(
  extra: Record<string, string> = {},
  options: Omit<StartEngineOptions, 'env'> = {},
): Promise<TestEngine> {
  const home = tempHome();
  const ownModel = Object.keys(extra).some((name) => name.startsWith('MNEMOS_API_EMBEDDINGS_'));
  const engineOptions = ownModel
    ? options.engine
    : { ...options.engine, model: options.engine?.model ?? (await sharedLocalModel()) };
  const running = await startEngine({ ...options, engine: engineOptions, env: testEnv(home.path, extra) });
  return {
    ...running,
    home: home.path,
    async dispose() {
      await running.close();
      home.remove();
    },
  };
}

export interface JsonAnswer<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

/** Sends a JSON request (or a raw string body) and parses the JSON answer. */
export async function call<T = Record<string, unknown>>(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonAnswer<T>> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
  }
  const response = await fetch(baseUrl + path, init);
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? {} : JSON.parse(text);
  } catch {
    // Non-JSON answers (metrics, docs) stay text.
  }
  return { status: response.status, body: parsed as T, headers: response.headers };
}

/** What a retain the test expects to succeed stored: the ids, and the operation when it runs in the background. */
export interface Retained {
  ids: string[];
  operation?: string;
}

/** Retains `body` into `bank` over HTTP and asserts a 200. */
export async function retainOk(baseUrl: string, bank: string, body: Record<string, unknown>): Promise<Retained> {
  const r = await call<{ memory_ids: string[]; operation_id?: string }>(
    baseUrl,
    'POST',
    `/v1/default/banks/${bank}/memories`,
    body,
  );
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return { ids: r.body.memory_ids, ...(r.body.operation_id ? { operation: r.body.operation_id } : {}) };
}
