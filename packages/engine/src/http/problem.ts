import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { describeIssue } from '@mnemos/http-input';
import { Problem, problem } from '@mnemos/problems';
import { DATABASE_RETRY_AFTER_SECONDS, findDatabaseUnavailable } from '../db/availability.js';

export function sendProblem(reply: FastifyReply, p: Problem): FastifyReply {
  if (p.headers) reply.headers(p.headers);
  return reply.code(p.status).type('application/problem+json').send(p.document());
}

interface AjvIssue {
  instancePath: string;
  message?: string;
  keyword: string;
  params: Record<string, unknown>;
  parentSchema?: unknown;
}

const unparsable = (reason: string) => problem('malformed_json', 'unparsable', { reason });

/** Maps every error Fastify raises (validation, body parsing, size) to a problem; anything else is a 500. */
export function toProblem(error: FastifyError | Problem | Error, request: FastifyRequest): Problem {
  if (error instanceof Problem) return error;
  const fe = error as FastifyError & { validation?: AjvIssue[]; validationContext?: string };
  if (fe.validation) {
    const where = fe.validationContext ?? 'body';
    const errors = fe.validation.map((v) => {
      let pointer = v.instancePath;
      if (v.keyword === 'required' && typeof v.params['missingProperty'] === 'string') {
        pointer += `/${v.params['missingProperty']}`;
      }
      return { pointer: `${where === 'body' ? '' : `/${where}`}${pointer}` || '/', detail: describeIssue(v) };
    });
    const first = errors[0]!;
    return problem('validation_failed', 'schema', { where, pointer: first.pointer, issue: first.detail }, { errors });
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return problem('payload_too_large', 'engineBody');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return problem('unsupported_media_type', 'json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return problem('validation_failed', 'emptyBody');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return unparsable(fe.message);
    default:
      break;
  }
  if (error instanceof SyntaxError || fe.statusCode === 400) return unparsable(error.message);
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return problem('bad_request', 'framework', { reason: fe.message }, { status: fe.statusCode });
  }
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
