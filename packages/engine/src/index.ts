import type { FastifyInstance } from 'fastify';
import { loadEngineConfig } from './config/load.js';
import { Engine, type Logger } from './engine.js';
import { buildApp, type RouteExtender } from './http/app.js';
import { mcpRoutes } from './mcp/routes.js';
import { installLlmLayer } from './llm/index.js';
import { vectorCacheFor } from './vectors/registry.js';

export { loadEngineConfig, ConfigError, type EngineConfig } from './config/load.js';
export { Engine, type Logger } from './engine.js';
export { buildApp, ENGINE_VERSION, type RouteExtender, type TypedApp } from './http/app.js';
export { Problem } from './http/problem.js';
export { spawnEngineProcess, type EngineProcess } from './process.js';

export interface StartEngineOptions {
  /** Settings as environment variables (MNEMOS_*); defaults to process.env. */
  env?: Record<string, string | undefined>;
  log?: Logger;
  /** Optional layers that add routes (MCP, LLM, ...). */
  extensions?: RouteExtender[];
  /** Runs after the engine's parts are open, before it listens (optional layers hook in here). */
  setup?: (engine: Engine) => Promise<void> | void;
}

export interface RunningEngine {
  url: string;
  engine: Engine;
  app: FastifyInstance;
  close(): Promise<void>;
}

const consoleLog: Logger = {
  info: (m) => console.log(`[mnemos] ${m}`),
  warn: (m) => console.warn(`[mnemos] ${m}`),
  error: (m) => console.error(`[mnemos] ${m}`),
};
const quietLog: Logger = { info: () => undefined, warn: () => undefined, error: (m) => console.error(`[mnemos] ${m}`) };

/** Loads recently written banks' indexes in the background; the engine waits for it (between banks) on close. */
function preloadIndexes(engine: Engine): void {
  const cache = vectorCacheFor(engine.db);
  if (!cache) return;
  const started = performance.now();
  const done = cache.preload(engine.db).then(
    (n) => { if (n > 0) engine.log.info(`bank indexes of ${n} bank(s) loaded in ${Math.round(performance.now() - started)} ms`); },
    (error: unknown) => {
      if (!cache.stopped) engine.log.warn(`loading bank indexes failed (${(error as Error).message}); they load on first recall instead`);
    },
  );
  engine.closers.push(async () => {
    cache.stop();
    await done;
  });
}

/** Opens the engine and serves its HTTP API; `close()` stops it and releases the database. */
export async function startEngine(options: StartEngineOptions = {}): Promise<RunningEngine> {
  const env = options.env ?? process.env;
  const config = loadEngineConfig(env);
  const log = options.log ?? (config.logLevel === 'silent' ? quietLog : consoleLog);
  const engine = await Engine.open(config, log);
  try {
    // Job queue (async retain) always; fact extraction and reflect when an LLM is configured.
    await installLlmLayer(engine);
    if (options.setup) await options.setup(engine);
    // The MCP server (POST /mcp) is part of every engine; callers' extensions come after it.
    const app = await buildApp(engine, [mcpRoutes, ...(options.extensions ?? [])]);
    await app.listen({ port: config.port, host: config.host });
    preloadIndexes(engine);
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
    return {
      url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
      engine,
      app,
      async close() {
        await app.close();
        await engine.close();
      },
    };
  } catch (error) {
    await engine.close();
    throw error;
  }
}
