// The onRequest hook that authenticates a route before its body is read. A refusal is answered at once and closes
// the connection, so a body the client still sends is never received (not even read and thrown away).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { closeAfterRefusal } from '@mnemos/http-input';
import { Problem } from '@mnemos/problems';
import { hookGuard } from './proxy.js';

export function authenticateFirst(fn: (request: FastifyRequest, reply: FastifyReply) => Promise<void>) {
  return hookGuard(async (request, reply) => {
    try {
      await fn(request, reply);
    } catch (err) {
      if (err instanceof Problem) closeAfterRefusal(request, reply);
      throw err;
    }
  });
}
