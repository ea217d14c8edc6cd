// The onRequest hook of routes signed in by the console session: the session (and, for a state-changing call, its
// CSRF token) is checked before the body is read, and the handler reads the session it found.
import type { FastifyRequest } from 'fastify';
import { authenticateFirst } from '../early-auth.js';
import { problem } from '@mnemos/problems';
import type { ConsoleAuth } from './console-auth.js';
import type { Session } from './sessions.js';

export interface SignedIn {
  token: string;
  session: Session;
}

export function sessionGate(auth: ConsoleAuth): {
  onRequest: ReturnType<typeof authenticateFirst>;
  sessionOf: (request: FastifyRequest) => SignedIn;
} {
  return {
    onRequest: authenticateFirst(async (request: FastifyRequest) => {
      request.signedIn = await auth.require(request);
    }),
    sessionOf: (request) => {
      if (request.signedIn === null) throw problem('unauthorized', 'notSignedIn');
      return request.signedIn;
    },
  };
}
