/**
 * Telling a database that is out of reach (or too slow) from a query that is wrong. The first is temporary and the
 * caller should retry later (HTTP 503 `database_unavailable` with Retry-After); the second is a bug or bad input.
 */

import { errorMessage } from '../util/error-message.js';

/** Seconds a caller is asked to wait before retrying a request that failed because the database was out of reach. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/**
 * `encryption_key`: during or after a key rotation, this engine's master key cannot serve a bank's write (its key is
 * retired, or the bank's data key is wrapped only under the other master); an engine with the right key can.
 */
export type UnavailableReason = 'unreachable' | 'timeout' | 'encryption_key';

/** A query failed because the database could not be reached or did not answer in time; retrying later can work. */
export class DatabaseUnavailableError extends Error {
  override readonly name = 'DatabaseUnavailableError';
  /** As a problem (HTTP status, code, detail), for the faces that report errors in that shape (HTTP, MCP). */
  readonly status = 503;
  readonly code = 'database_unavailable';
  get detail(): string {
    return this.message;
  }
  constructor(
    readonly reason: UnavailableReason,
    cause: unknown,
  ) {
    super(describeUnavailable(reason, cause), { cause });
  }
}

/** Node's codes for a socket that could not connect or broke off. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
]);

/**
 * SQLSTATEs of a server that went away or will not take the connection: class 08 (connection exception), the
 * backend terminated by an administrator (pg_terminate_backend) or a crash, a server still starting, no free slots.
 */
const SERVER_GONE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** node-postgres reports a lost or refused connection with these messages and no code. */
const LOST_CONNECTION_MESSAGES = [
  'connection terminated',
  'timeout exceeded when trying to connect',
  'is not queryable',
  'too many connections',
];

/** Why a database error is temporary, or undefined when it is not (the query itself failed). */
export function unavailableReason(error: unknown): UnavailableReason | undefined {
  if (error instanceof DatabaseUnavailableError) return error.reason;
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    // 57014: cancelled, here by statement_timeout (MNEMOS_API_DATABASE_STATEMENT_TIMEOUT_MS).
    if (code === '57014') return 'timeout';
    if (SOCKET_CODES.has(code) || SERVER_GONE_STATES.has(code) || code.startsWith('08')) return 'unreachable';
  }
  const message = error instanceof Error ? error.message.toLowerCase() : '';
  return LOST_CONNECTION_MESSAGES.some((m) => message.includes(m)) ? 'unreachable' : undefined;
}

/** The error as a DatabaseUnavailableError when it is one of those failures, else unchanged. */
export function classifyDatabaseError(error: unknown): unknown {
  if (error instanceof DatabaseUnavailableError) return error;
  const reason = unavailableReason(error);
  return reason === undefined ? error : new DatabaseUnavailableError(reason, error);
}

/** The DatabaseUnavailableError behind an error (itself or along its `cause` chain), if any. */
export function findDatabaseUnavailable(error: unknown): DatabaseUnavailableError | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof DatabaseUnavailableError) return e;
  }
  return undefined;
}

function describeUnavailable(reason: UnavailableReason, cause: unknown): string {
  const why = errorMessage(cause);
  if (reason === 'encryption_key') return `${why}; nothing was stored.`;
  if (reason === 'timeout') {
    return (
      `The database did not answer in time (${why}); retry shortly, and if it persists check the server's load ` +
      'or raise MNEMOS_API_DATABASE_STATEMENT_TIMEOUT_MS.'
    );
  }
  return (
    `The database is out of reach (${why}); the engine reconnects by itself, so retry shortly, and if it ` +
    'persists check that the Postgres server in MNEMOS_API_DATABASE_URL is running and reachable.'
  );
}
