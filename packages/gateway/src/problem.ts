// RFC 9457 problem+json answers: {type, title, status, detail, code, errors?}. Every error the gateway produces goes
// through here, so no malformed input ever turns into a 500.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { inputErrorProblem } from '@mnemos/http-input';
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

/** Fastify error handler: the input layer's problems as it maps them; anything else is the gateway's own failure. */
export function errorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const answer = inputErrorProblem(error, () => problem('payload_too_large', 'gatewayBody'));
  if (answer !== undefined) return sendProblem(reply, answer);
  request.log.error({ err: error }, 'unhandled error');
  return sendProblem(reply, problem('internal_error', 'gateway'));
}
