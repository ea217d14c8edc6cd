import type { FastifyInstance } from 'fastify';
import { ensureWritableHome, homeParts } from './home.js';
import { loadEngineConfig } from './config/load.js';
import { Engine, type EngineOptions, type Logger } from './engine.js';
import { buildApp, type RouteExtender } from './http/app.js';
import { mcpRoutes } from './http/routes/mcp.js';
import { unknownVariableWarnings } from './config/unknown-variables.js';
import { createLogger, type EngineLogger } from './log.js';
import { serverLimits } from '@mnemos/http-input';
import { HttpGate } from './startup/http-gate.js';
import { Readiness } from './startup/readiness.js';

export { loadEngineConfig, ConfigError, type EngineConfig } from './config/load.js';
export { Engine, type EngineOptions, type Logger } from './engine.js';
export { buildApp, ENGINE_VERSION, type RouteExtender, type TypedApp } from './http/app.js';
export { Problem, problem } from '@mnemos/problems';
export { spawnEngineProcess, waitUntilReady, type EngineProcess } from './process.js';
export type { ProgressReporter } from './startup/readiness.js';
export { MemoryService } from './service/memory-service.js';
export type * from './service/types.js';
export { ENGINE_PLUGINS, type EnginePlugin } from './plugins/index.js';

export interface StartEngineOptions {
  /** Settings as environment variables (MNEMOS_*); defaults to process.env. */
  env?: Record<string, string | undefined>;
  /** Where the engine's own lines go; defaults to the logger MNEMOS_API_LOG_LEVEL and MNEMOS_API_LOG_FORMAT choose. */
  log?: Logger;
  /** Optional layers that add routes (MCP, LLM, ...). */
  extensions?: RouteExtender[];
  /** Called once the port is bound, before the engine warms (from then on /health answers "warming"). */
  onListening?: (url: string, log: EngineLogger) => void;
  /** The engine's clock and background schedules (tests move time instead of waiting for it). */
  engine?: EngineOptions;
}

export interface RunningEngine {
  url: string;
  engine: Engine;
  app: FastifyInstance;
  /**
   * Stops accepting requests, waits up to `graceMs` for those in flight, gives running jobs back to the queue and
   * closes the database (releasing its lock).
   */
  close(graceMs?: number): Promise<void>;
}

/** How long a stop waits for requests in flight before cutting their connections. */
const STOP_GRACE_MS = 5_000;

/**
 * Starts the engine: binds the port first (so a taken port fails before any slow work, and health probes get
 * "warming" answers while it starts), then opens the database and the model, then serves its HTTP API. Resolves once
 * it is ready; `close()` stops it and releases the database.
 */
export async function startEngine(options: StartEngineOptions = {}): Promise<RunningEngine> {
  const env = options.env ?? process.env;
  const config = loadEngineConfig(env);
  const logger = createLogger(config.logLevel, config.logFormat);
  const log = options.log ?? logger;
  for (const warning of unknownVariableWarnings(env)) log.warn(warning);
  // A data folder the engine cannot write is a setup error: it fails before the port opens, not after warming.
  ensureWritableHome(config.home, homeParts(config));
  const readiness = new Readiness(log);
  const gate = new HttpGate(readiness, serverLimits(config.http).http);
  readiness.report('binding port');
  const url = urlOf(config.host, await gate.listen(config.port, config.host));
  options.onListening?.(url, logger);
  let engine: Engine | undefined;
  try {
    // Async retain always; fact extraction and reflect when an LLM is configured (plugins/index.ts).
    engine = await Engine.open(config, log, readiness.report, undefined, options.engine);
    readiness.report('starting services');
    // The MCP server (POST /mcp) is part of every engine; callers' extensions come after it.
    const app = await buildApp(engine, [mcpRoutes, ...(options.extensions ?? [])], {
      logger,
      serverFactory: gate.serverFactory,
    });
    await app.ready();
    gate.open();
    readiness.markReady();
    engine.preloadIndexes();
    const opened = engine;
    return {
      url,
      engine: opened,
      app,
      async close(graceMs = STOP_GRACE_MS) {
        await gate.stop(graceMs);
        await app.close();
        await opened.close();
      },
    };
  } catch (error) {
    await gate.stop(0);
    await engine?.close();
    throw error;
  }
}

function urlOf(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}
