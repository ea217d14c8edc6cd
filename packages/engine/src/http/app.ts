import { timingSafeEqual } from 'node:crypto';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
  type FastifyServerFactory,
} from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { typed, type RouteExtender } from './typed-app.js';
import { closeAfterRefusal, frameworkProblem, installInputLayer } from '@mnemos/http-input';
import { messageOf, Problem, problem } from '@mnemos/problems';
import type { Engine } from '../engine.js';
import { BodyBudget, budgetOf, serverLimits } from '@mnemos/http-input';
import { API_DESCRIPTION_VERSION } from '../version.js';
import { sendProblem, toProblem } from './problem.js';
import { registerBankRoutes } from './routes/banks.js';
import { registerDescriptionRoutes } from './routes/description.js';
import { registerEntityRoutes } from './routes/entities.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerMemoryRoutes } from './routes/memories.js';
import { registerReflectRoutes } from './routes/reflect.js';
import { registerSpaceRoutes } from './routes/spaces.js';
import { registerTransferRoutes } from './routes/transfer.js';
import { Problem as ProblemSchema } from '../wire/schemas.js';

export { ENGINE_VERSION } from '../version.js';

export type { RouteExtender, TypedApp } from './typed-app.js';

export interface AppOptions {
  /** The engine's logger (log.ts); without it Fastify makes its own at MNEMOS_API_LOG_LEVEL. */
  logger?: FastifyBaseLogger;
  /** Serves on a server that already listens (startup/http-gate.ts) instead of one Fastify creates. */
  serverFactory?: FastifyServerFactory;
}

export async function buildApp(
  engine: Engine,
  extensions: RouteExtender[] = [],
  options: AppOptions = {},
): Promise<FastifyInstance> {
  const app = Fastify({
    ...(options.logger
      ? { loggerInstance: options.logger }
      : { logger: engine.config.logLevel === 'silent' ? false : { level: engine.config.logLevel } }),
    ...(options.serverFactory ? { serverFactory: options.serverFactory } : {}),
    // One line per request at debug (onResponse below) instead of Fastify's two at info.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: engine.config.maxBodyBytes,
    // Bank ids may be up to 256 characters, URL-encoded up to three times longer.
    routerOptions: { maxParamLength: 1024, ignoreTrailingSlash: true },
    forceCloseConnections: true,
    ...serverLimits(engine.config.http),
    frameworkErrors: (error, _request, reply) => {
      void sendProblem(reply, frameworkProblem(error));
    },
  });
  // The first onRequest hook: a request without the token (or for a tenant this engine does not serve) takes no share
  // of the body budget, and is answered and closed before its body is read.
  app.addHook('onRequest', async (request, reply) => {
    try {
      authenticate(engine, request);
      checkTenant(engine, request);
    } catch (error) {
      if (error instanceof Problem) closeAfterRefusal(request, reply);
      throw error;
    }
  });
  const input = installInputLayer(app, { ignoreTrailingSlash: true, maxParamLength: 1024 });
  const bodyBudget = new BodyBudget({ maxBodyBytes: engine.config.maxBodyBytes, ...budgetOf(engine.config.http) });
  bodyBudget.register(app, sendProblem, messageOf('payload_too_large', 'engineBody'));
  app.addSchema(ProblemSchema);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Mnemos engine API',
        version: API_DESCRIPTION_VERSION,
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
        description: 'Persistent memory for AI agents: retain, recall, reflect. Errors are application/problem+json.',
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'MNEMOS_API_AUTH_TOKEN, when the engine has one; an engine without it needs no credential',
          },
        },
      },
      // `{}`: an engine without a token takes calls with no credential.
      security: engine.config.authToken ? [{ bearer: [] }] : [{}],
    },
    refResolver: {
      buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  // Swagger UI's assets ship inside the package, so /docs works offline.
  await app.register(swaggerUi, { routePrefix: '/docs' });

  app.setErrorHandler((error, request, reply) => {
    const problem = toProblem(error instanceof Error ? error : new Error(String(error)), request);
    return sendProblem(reply, problem);
  });
  app.setNotFoundHandler((request, reply) => {
    const wrongMethod = input.wrongMethod(request);
    if (wrongMethod !== undefined) return sendProblem(reply, wrongMethod);
    const route = `${request.method} ${request.url.split('?')[0]}`;
    return sendProblem(reply, problem('not_found', 'noRoute', { route }));
  });

  app.addHook('onResponse', async (request, reply) => {
    const ms = Math.round(reply.elapsedTime);
    request.log.debug({ method: request.method, url: request.url, status: reply.statusCode, ms }, 'request');
    engine.metrics.httpDuration.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  const t = typed(app);
  registerHealthRoutes(t, engine);
  registerBankRoutes(t, engine);
  registerMemoryRoutes(t, engine);
  registerTransferRoutes(t, engine);
  registerEntityRoutes(t, engine);
  registerSpaceRoutes(t, engine);
  registerDescriptionRoutes(t, engine);
  registerReflectRoutes(t, engine);
  for (const extend of extensions) await extend(t, engine);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}

const PUBLIC_PATHS = /^\/(health|version|metrics|openapi\.json|docs)(\/|$|\?)/;

/** With MNEMOS_API_AUTH_TOKEN set, every API call needs it (Bearer, or bare as Hindsight clients may send). */
function authenticate(engine: Engine, request: FastifyRequest): void {
  const token = engine.config.authToken;
  if (token === undefined || PUBLIC_PATHS.test(request.url)) return;
  const header = request.headers.authorization ?? '';
  const presented = header.replace(/^Bearer\s+/i, '').trim();
  const a = Buffer.from(presented);
  const b = Buffer.from(token);
  if (presented === '' || a.length !== b.length || !timingSafeEqual(a, b)) {
    const message = presented === '' ? 'missingToken' : 'wrongToken';
    throw problem('unauthorized', message, { headers: { 'www-authenticate': 'Bearer' } });
  }
}

/** Percent-decoding that never throws: a malformed sequence is shown as sent. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Without an auth token the engine serves only the `default` tenant. The description-level paths (`/v1/retain`,
 * `/v1/recall`, `/v1/reflect`) have no tenant segment, so the check applies only to paths with one more segment.
 */
function checkTenant(engine: Engine, request: FastifyRequest): void {
  const match = /^\/v1\/([^/?]+)\/[^/?]/.exec(request.url);
  if (!match || engine.config.authToken !== undefined) return;
  const tenant = decodeSegment(match[1]!);
  if (tenant === 'default') return;
  throw problem('tenant_not_found', 'singleTenant', { tenant });
}
