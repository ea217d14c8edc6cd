import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { inputErrorProblem } from '@mnemos/http-input';
import { problem, type Problem } from '@mnemos/problems';
import { DATABASE_RETRY_AFTER_SECONDS, findDatabaseUnavailable } from '../db/availability.js';

export function sendProblem(reply: FastifyReply, p: Problem): FastifyReply {
  if (p.headers) reply.headers(p.headers);
  return reply.code(p.status).type('application/problem+json').send(p.document());
}

/**
 * Maps every error to a problem: the input layer's (validation, body parsing, size) as it maps them, the database out
 * of reach as a 503; anything else is a 500.
 */
export function toProblem(error: FastifyError | Problem | Error, request: FastifyRequest): Problem {
  const input = inputErrorProblem(error, () => problem('payload_too_large', 'engineBody'));
  if (input !== undefined) return input;
  // The database out of reach or too slow: temporary, so 503 with Retry-After (clients retry it), never a 500.
  const unavailable = findDatabaseUnavailable(error);
  if (unavailable) {
    return problem(
      'database_unavailable',
      'stated',
      { detail: unavailable.message },
      {
        headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) },
      },
    );
  }
  request.log.error({ err: error }, 'unhandled error');
  return problem('internal_error', 'engine');
}
