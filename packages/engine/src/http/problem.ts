import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { describeIssue } from '@mnemos/http-input';
import { DATABASE_RETRY_AFTER_SECONDS, findDatabaseUnavailable } from '../db/availability.js';

/** An error a user sees: RFC 9457 problem details with a stable machine `code`. */
/** Why a body over MNEMOS_API_MAX_BODY_BYTES is refused, and what to do. */
export const TOO_LARGE_DETAIL =
  'The request body is larger than this engine accepts (MNEMOS_API_MAX_BODY_BYTES); split it into smaller requests.';

export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly errors?: Array<{ pointer: string; detail: string }>,
    readonly headers?: Record<string, string>,
  ) {
    super(detail);
  }
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** The problem's JSON body; also written outside Fastify (while the engine warms or stops). */
export function problemDocument(p: Problem): Record<string, unknown> {
  return {
    type: `https://mnemos.dev/problems/${p.code}`,
    title: TITLES[p.status] ?? 'Error',
    status: p.status,
    detail: p.detail,
    code: p.code,
    ...(p.errors ? { errors: p.errors } : {}),
  };
}

export function sendProblem(reply: FastifyReply, p: Problem): FastifyReply {
  if (p.headers) reply.headers(p.headers);
  return reply.code(p.status).type('application/problem+json').send(problemDocument(p));
}

interface AjvIssue {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
  parentSchema?: unknown;
}

/** Maps every error Fastify raises (validation, body parsing, size) to a problem; anything else is a 500. */
export function toProblem(error: FastifyError | Problem | Error, request: FastifyRequest): Problem {
  if (error instanceof Problem) return error;
  const fe = error as FastifyError & { validation?: AjvIssue[]; validationContext?: string };
  if (fe.validation) {
    const where = fe.validationContext ?? 'body';
    const errors = fe.validation.map((v) => {
      let pointer = v.instancePath ?? '';
      if (v.keyword === 'required' && typeof v.params?.missingProperty === 'string') {
        pointer += `/${v.params.missingProperty}`;
      }
      return { pointer: `${where === 'body' ? '' : `/${where}`}${pointer}` || '/', detail: describeIssue(v) };
    });
    const first = errors[0]!;
    return new Problem(
      400,
      'validation_failed',
      `The request ${where} is invalid: ${first.pointer} ${first.detail}. Fix the field and send the request again.`,
      errors,
    );
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new Problem(
        413,
        'payload_too_large',
        TOO_LARGE_DETAIL,
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new Problem(415, 'unsupported_media_type', 'Send the body as JSON with Content-Type: application/json.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new Problem(400, 'validation_failed', 'The request body is empty; send a JSON object.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new Problem(400, 'malformed_json', `The request body is not valid JSON (${fe.message}); send a JSON object.`);
    default:
      break;
  }
  if (error instanceof SyntaxError || fe.statusCode === 400) {
    return new Problem(400, 'malformed_json', `The request body is not valid JSON (${error.message}); send a JSON object.`);
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new Problem(fe.statusCode, 'bad_request', fe.message);
  }
  // The database out of reach or too slow: temporary, so 503 with Retry-After (clients retry it), never a 500.
  const unavailable = findDatabaseUnavailable(error);
  if (unavailable) {
    return new Problem(503, 'database_unavailable', unavailable.message, undefined, {
      'retry-after': String(DATABASE_RETRY_AFTER_SECONDS),
    });
  }
  request.log.error({ err: error }, 'unhandled error');
  return new Problem(500, 'internal_error', 'The engine failed to handle this request; it has been logged. Try again.');
}

export const notFound = (what: string) => new Problem(404, `${what.replace(/ /g, '_')}_not_found`, `No ${what} with that id exists.`);
