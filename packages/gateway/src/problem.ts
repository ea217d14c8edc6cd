// RFC 9457 problem+json answers: {type, title, status, detail, code, errors?}. Every error the gateway produces goes
// through here, so no malformed input ever turns into a 500.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { describeIssue } from '@mnemos/http-input';
import { Problem, type FieldError, type ProblemCode } from '@mnemos/problems';

/** Why a body over GATEWAY_MAX_BODY_BYTES is refused, and what to do. */
export const TOO_LARGE_DETAIL =
  'The request body is larger than the gateway accepts (GATEWAY_MAX_BODY_BYTES); send fewer or smaller items per call.';

/**
 * A gateway error: a catalogue problem with the gateway's own sentence. The status names what the gateway answers;
 * the catalogue's is the same for every code the gateway uses, and framework errors keep their own 4xx.
 */
export class HttpProblem extends Problem {
  constructor(
    status: number,
    code: ProblemCode,
    detail: string,
    options: { extra?: Record<string, unknown>; headers?: Record<string, string>; errors?: FieldError[] } = {},
  ) {
    super(code, detail, { ...options, status });
  }
}

export function sendProblem(reply: FastifyReply, problem: HttpProblem): FastifyReply {
  for (const [k, v] of Object.entries(problem.headers ?? {})) reply.header(k, v);
  if (problem.status === 401 && !reply.hasHeader('www-authenticate')) {
    reply.header('www-authenticate', 'Bearer realm="mnemos"');
  }
  return reply.code(problem.status).type('application/problem+json').send(problem.document());
}

export const unauthorized = (detail: string): HttpProblem => new HttpProblem(401, 'unauthorized', detail);
export const insufficientScope = (scope: string): HttpProblem =>
  new HttpProblem(
    403,
    'insufficient_scope',
    `This operation needs the scope "${scope}", which the credential does not have.`,
    {
      extra: { required_scope: scope },
      headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
    },
  );
export const forbidden = (detail: string): HttpProblem => new HttpProblem(403, 'forbidden', detail);
export const notFound = (detail: string): HttpProblem => new HttpProblem(404, 'not_found', detail);
export const validation = (detail: string, errors?: FieldError[]): HttpProblem =>
  new HttpProblem(400, 'validation_failed', detail, errors === undefined ? {} : { errors });

interface ValidationItem {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
  parentSchema?: unknown;
}

/** Fastify error handler: maps schema validation, body parsing and size errors to 4xx problems. */
export function errorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof HttpProblem) return sendProblem(reply, error);
  const validationItems = (error as FastifyError & { validation?: ValidationItem[] }).validation;
  if (validationItems !== undefined) {
    const where = (error as FastifyError & { validationContext?: string }).validationContext ?? 'body';
    const errors = validationItems.map((v) => {
      const missing = v.params['missingProperty'];
      const pointer = `${v.instancePath}${typeof missing === 'string' ? `/${missing}` : ''}`;
      return { pointer: `/${where}${pointer}`.replace(/\/$/, ''), detail: describeIssue(v) };
    });
    const first = errors[0];
    return sendProblem(
      reply,
      validation(
        first === undefined
          ? 'The request is invalid.'
          : `The request ${where} is invalid: ${first.pointer} ${first.detail}.`,
        errors,
      ),
    );
  }
  const status = error.statusCode ?? 500;
  if (status === 413 || error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return sendProblem(reply, new HttpProblem(413, 'payload_too_large', TOO_LARGE_DETAIL));
  }
  if (status === 415 || error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return sendProblem(reply, new HttpProblem(415, 'unsupported_media_type', 'Send the body as application/json.'));
  }
  if (status >= 400 && status < 500) {
    const code =
      error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
      error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
      error instanceof SyntaxError
        ? 'validation_failed'
        : 'bad_request';
    return sendProblem(
      reply,
      new HttpProblem(
        status,
        code,
        code === 'validation_failed' ? `The request body is not valid JSON: ${error.message}` : error.message,
      ),
    );
  }
  request.log.error({ err: error }, 'unhandled error');
  return sendProblem(
    reply,
    new HttpProblem(
      500,
      'internal_error',
      'The gateway failed unexpectedly; the request was not completed. Try again.',
    ),
  );
}
