import { announcer, createLogger as createServerLogger, type LogFormat, type LogLevel } from '@mnemos/http-input';
import type { ServerLogger } from '@mnemos/http-input';

export type { LogFormat, LogLevel };
export { announcer };

export type EngineLogger = ServerLogger;

/** Where the engine's own lines go: the pino logger, or any object with these three methods. */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** The engine's one logger (see `createLogger` of `@mnemos/http-input`), named `mnemos` in JSON lines. */
export function createLogger(level: LogLevel, format: LogFormat | undefined): EngineLogger {
  return createServerLogger('mnemos', level, format);
}
