import type { FastifyReply, FastifyRequest } from 'fastify';

/** Whether a request announces a body (a length or chunked framing), which may still be on its way. */
const bodyExpected = (request: FastifyRequest): boolean =>
  request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined;

/**
 * Marks the answer to a request refused before its body was read (no credential, a wrong one) so the server closes
 * the connection once the answer is out: Node then stops reading, and the body the client still sends is never
 * received. Without it, Node reads and discards the whole body to keep the connection for the next request, so
 * anonymous clients could make the server receive any number of slow bodies.
 */
export function closeAfterRefusal(request: FastifyRequest, reply: FastifyReply): void {
  if (bodyExpected(request)) reply.header('connection', 'close');
}
