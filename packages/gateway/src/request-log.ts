import type { FastifyInstance } from 'fastify';

/** Routes that load balancers and orchestrators call every few seconds; a line each would drown every other line. */
const PROBES = new Set(['/health', '/health/live', '/version']);

/**
 * One line per request when it is answered (Fastify's own two lines are off), with the fields of the engine's request
 * lines. Probes are logged at debug, everything else at info: the gateway is where a multi-tenant deployment sees its
 * traffic.
 */
export function logRequests(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    const line = {
      method: request.method,
      url: request.url,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime),
    };
    if (PROBES.has(request.routeOptions.url ?? '')) request.log.debug(line, 'request');
    else request.log.info(line, 'request');
  });
}
