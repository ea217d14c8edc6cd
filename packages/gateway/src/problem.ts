// RFC 9457 problem+json answers: {type, title, status, detail, code, errors?}. Every error the gateway produces goes
// through here, so no malformed input ever turns into a 500.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { describeIssue } from '@mnemos/http-input';
import { messageOf, problem, Problem } from '@mnemos/problems';

/** Why a body over GATEWAY_MAX_BODY_BYTES is refused, and what to do (the input layer's body budget says it too). */
export const TOO_LARGE_DETAIL = messageOf('payload_too_large', 'gatewayBody');

export function sendProblem(reply: FastifyReply, answer: Problem): FastifyReply {
  for (const [k, v] of Object.entries(answer.headers ?? {})) reply.header(k, v);
  if (answer.status === 401 && !reply.hasHeader('www-authenticate')) {
    reply.header('www-authenticate', 'Bearer realm="mnemos"');
  }
  return reply.code(answer.status).type('application/problem+json').send(answer.document());
}

export const insufficientScope = (scope: string): Problem =>
  problem(
    'insufficient_scope',
    'missingScope',
    { scope },
    {
      extra: { required_scope: scope },
      headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
    },
  );

interface ValidationItem {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
  parentSchema?: unknown;
}

/** Fastify error handler: maps schema validation, body parsing and size errors to 4xx problems. */
export function errorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof Problem) return sendProblem(reply, error);
  const validationItems = (error as FastifyError & { validation?: ValidationItem[] }).validation;
  if (validationItems !== undefined) {
    const where = (error as FastifyError & { validationContext?: string }).validationContext ?? 'body';
    const errors = validationItems.map((v) => {
      const missing = v.params['missingProperty'];
      const pointer = `${v.instancePath}${typeof missing === 'string' ? `/${missing}` : ''}`;
      return { pointer: `/${where}${pointer}`.replace(/\/$/, ''), detail: describeIssue(v) };
    });
    const first = errors[0];
    const options = { errors };
    return sendProblem(
      reply,
      first === undefined
        ? problem('validation_failed', 'unexplained', options)
        : problem('validation_failed', 'field', { where, pointer: first.pointer, issue: first.detail }, options),
    );
  }
  const status = error.statusCode ?? 500;
  if (status === 413 || error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return sendProblem(reply, problem('payload_too_large', 'gatewayBody'));
  }
  if (status === 415 || error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return sendProblem(reply, problem('unsupported_media_type', 'json'));
  }
  if (status >= 400 && status < 500) {
    const notJson =
      error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
      error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
      error instanceof SyntaxError;
    return sendProblem(
      reply,
      notJson
        ? problem('validation_failed', 'notJson', { reason: error.message }, { status })
        : problem('bad_request', 'framework', { reason: error.message }, { status }),
    );
  }
  request.log.error({ err: error }, 'unhandled error');
  return sendProblem(reply, problem('internal_error', 'gateway'));
}
