import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export type LogFormat = 'pretty' | 'json';
export const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
export const LOG_FORMATS: readonly LogFormat[] = ['pretty', 'json'];

export type ServerLogger = Logger;

/**
 * The one logger of a server (engine or gateway), shared with Fastify so request lines and start-up lines look alike:
 * readable lines for a person (pretty) or one JSON object per line for a log collector (json). Without a chosen format,
 * a terminal gets pretty lines and anything else (a pipe, a container's log driver) gets JSON.
 */
export function createLogger(name: string, level: LogLevel, format: LogFormat | undefined): ServerLogger {
  const chosen = format ?? (process.stdout.isTTY ? 'pretty' : 'json');
  const options = { level, base: { name } };
  if (chosen === 'json') return pino(options, pino.destination({ fd: 1, sync: true }));
  // Synchronous, in this thread: a line written just before the process exits is never lost.
  return pino(options, pretty({ sync: true, colorize: process.stdout.isTTY, ignore: 'pid,hostname,name' }));
}

/**
 * Lines that scripts and supervisors wait for ("... listening on ...", "... stopped") are written whatever the level,
 * so a quiet server (level warn or silent) still says where it listens and that it stopped.
 */
export function announcer(log: ServerLogger): ServerLogger {
  return log.levelVal <= pino.levels.values.info! ? log : log.child({}, { level: 'info' });
}
