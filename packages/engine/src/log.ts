import { pino, type Logger as PinoLogger } from 'pino';
import pretty from 'pino-pretty';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export type LogFormat = 'pretty' | 'json';

export type EngineLogger = PinoLogger;

/** Where the engine's own lines go: the pino logger, or any object with these three methods. */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/**
 * The engine's one logger, shared with Fastify so request logs and start-up lines look alike: readable lines for a
 * person (pretty) or one JSON object per line for a log collector (json). Without a chosen format, a terminal gets
 * pretty lines and anything else (a pipe, a container's log driver) gets JSON.
 */
export function createLogger(level: LogLevel, format: LogFormat | undefined): EngineLogger {
  const chosen = format ?? (process.stdout.isTTY ? 'pretty' : 'json');
  const options = { level, base: { name: 'mnemos' } };
  if (chosen === 'json') return pino(options, pino.destination({ fd: 1, sync: true }));
  // Synchronous, in this thread: a line written just before the process exits is never lost.
  return pino(options, pretty({ sync: true, colorize: process.stdout.isTTY, ignore: 'pid,hostname,name' }));
}

/**
 * Lines that scripts and supervisors wait for ("engine listening on ...") are written whatever the level, so a quiet
 * engine (MNEMOS_API_LOG_LEVEL=warn or silent) still says where it listens.
 */
export function announcer(log: EngineLogger): EngineLogger {
  return log.levelVal <= pino.levels.values.info! ? log : log.child({}, { level: 'info' });
}
