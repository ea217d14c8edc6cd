// What a request's hooks learn and its handler reads later, kept on the request as Fastify decorations (typed here
// by declaration merging). Each starts as null: an object given as the initial value would be one object shared by
// every request.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { problem } from '@mnemos/problems';
import type { SignedIn } from './account/session-gate.js';
import type { Principal } from './auth.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller, set by the route's onRequest hook once it authenticated the request. */
    principal: Principal | null;
    /** The console session that a session-gated route's onRequest hook found. */
    signedIn: SignedIn | null;
    /** performance.now() when the request arrived (the gateway's share of the time, in Server-Timing). */
    arrivedAt: number | null;
    /** The body of a route that takes it as it comes (an import), read as bytes to forward unparsed. */
    rawBody: Buffer | null;
  }
}

export function decorateRequests(app: FastifyInstance): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('signedIn', null);
  app.decorateRequest('arrivedAt', null);
  app.decorateRequest('rawBody', null);
}

/** The caller that the route's onRequest hook authenticated. */
export function principalOf(request: FastifyRequest): Principal {
  if (request.principal === null) throw problem('unauthorized', 'unauthenticated');
  return request.principal;
}
