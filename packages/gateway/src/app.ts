// Assembles the gateway: Fastify app, control plane, authenticator, engines, OAuth server, routes, OpenAPI.
import type { AddressInfo } from 'node:net';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import cookie from '@fastify/cookie';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import { frameworkProblem, installInputLayer } from '@mnemos/http-input';
import { problem } from '@mnemos/problems';
import { ConsoleAuth, CSRF_HEADER, PROJECT_HEADER } from './account/console-auth.js';
import { consentRoutes } from './account/oauth-consent.js';
import { accountRoutes } from './account/routes.js';
import { Sessions } from './account/sessions.js';
import { Authenticator } from './auth.js';
import { consoleRoutes } from './console/static.js';
import { BodyBudget, budgetOf, createLogger, serverLimits, type ServerLogger } from '@mnemos/http-input';
import { ConfigError, loadConfig, type GatewayConfig } from './config.js';
import type { GatewayContext } from './context.js';
import { admitCreation } from './creation-limits.js';
import { createPool, migrate, ping } from './db.js';
import { authenticateFirst } from './early-auth.js';
import { Engines } from './engine.js';
import { mcpRoutes } from './mcp.js';
import { OAUTH_ENDPOINTS } from './oauth/endpoints.js';
import { ProjectClients } from './oauth/clients.js';
import { pruneOAuthStore } from './oauth/token-store.js';
import { createOAuthServer, type OAuthServer } from './oauth/provider.js';
import { isClientRegistration } from './oauth/registration-requests.js';
import { SignInThrottle } from './oauth/signin-throttle.js';
import { openApiOptions, openApiDocument } from './openapi.js';
import { errorHandler, sendProblem, TOO_LARGE_DETAIL } from './problem.js';
import { QUOTA_CHANNEL, QuotaLedger } from './quota.js';
import { logRequests } from './request-log.js';
import { decorateRequests } from './request-state.js';
import { installRateLimits } from './ratelimit.js';
import { adminRoutes } from './routes/admin.js';
import { memoryRoutes } from './routes/memory.js';
import { meProjectRoutes, projectHandlers } from './routes/project.js';
import { ProblemSchema } from './schemas.js';
import { loadSecrets } from './secrets.js';
import { VERSION } from './version.js';
import { Store } from './store.js';

export interface StartOptions {
  env?: Record<string, string | undefined>;
  /** Where the gateway's lines go; defaults to the logger GATEWAY_LOG_LEVEL and GATEWAY_LOG_FORMAT choose. */
  logger?: ServerLogger;
}

export interface RunningGateway {
  url: string;
  app: FastifyInstance;
  config: GatewayConfig;
  /** Writes this gateway's counted quota units and returns its idle leases now (normally every GATEWAY_QUOTA_FLUSH_MS). */
  flushQuotas(): Promise<void>;
  /** Quota units held by requests in flight on this gateway: reserved, not yet counted or given back. */
  quotaUnitsInFlight(): number;
  close(): Promise<void>;
}

export { VERSION } from './version.js';

/** A failure to open the port, in one line that names the setting to change. */
function listenError(error: unknown, config: GatewayConfig): Error {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `${config.host}:${config.port}`;
  if (code === 'EADDRINUSE') {
    return new ConfigError(`Port ${where} is already in use; stop what uses it or set GATEWAY_PORT to a free port.`);
  }
  if (code === 'EACCES') {
    return new ConfigError(`Not allowed to listen on ${where}; set GATEWAY_PORT to a port above 1023.`);
  }
  if (code === 'EADDRNOTAVAIL') {
    return new ConfigError(`GATEWAY_HOST ${config.host} is not an address of this machine; use 0.0.0.0 or 127.0.0.1.`);
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** The gateway's logger: the engine's formats, its own name in JSON lines. */
export function gatewayLogger(config: Pick<GatewayConfig, 'logLevel' | 'logFormat'>): ServerLogger {
  return createLogger('mnemos-gateway', config.logLevel, config.logFormat);
}

export async function startGateway(options: StartOptions = {}): Promise<RunningGateway> {
  const config = loadConfig(options.env ?? process.env);
  const pool = createPool(config.databaseUrl, config.dbPoolSize);
  try {
    await migrate(pool);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new Error(
      `GATEWAY_DATABASE_URL: cannot prepare the control-plane database: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const secrets = await loadSecrets(pool);
  const store = new Store(pool);
  const auth = new Authenticator(store, pool, config.databaseUrl);
  const quotas = new QuotaLedger(pool, { leaseUnits: config.quotaLeaseUnits, flushMs: config.quotaFlushMs });
  auth.subscribe(QUOTA_CHANNEL, (payload) => quotas.onReclaim(payload));
  auth.onProjectChanged = (id) => quotas.projectChanged(id);
  await quotas.start();
  await auth.start();
  const engines = new Engines(config.engines, config.engineTimeoutMs, config.engineConnectTimeoutMs);

  let publicUrl = config.publicUrl ?? '';
  let oauth: OAuthServer | undefined;
  const sessions = new Sessions(pool, config.sessionTtlMs);
  const clients = new ProjectClients(pool, secrets.clientSecretKey, (e) => auth.evict(e));

  // Typed as Fastify's logger so the app keeps Fastify's default instance type.
  const logger: FastifyBaseLogger = options.logger ?? gatewayLogger(config);
  const app = Fastify({
    loggerInstance: logger,
    // One line per request (request-log.ts) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.maxBodyBytes,
    trustProxy: config.trustProxy,
    forceCloseConnections: true,
    ...serverLimits(config.http),
    routerOptions: { maxParamLength: 2048 },
    // Router-level failures (bad URL encoding, over-long parameters) are problems too.
    frameworkErrors: (error, _request, reply) => {
      void sendProblem(reply, frameworkProblem(error));
    },
  });
  const bodyBudget = new BodyBudget({ maxBodyBytes: config.maxBodyBytes, ...budgetOf(config.http) });
  bodyBudget.register(app, sendProblem, TOO_LARGE_DETAIL);
  const input = installInputLayer(app, { maxParamLength: 2048 });
  logRequests(app);
  decorateRequests(app);
  app.addHook('onRequest', (request, _reply, done) => {
    request.arrivedAt = performance.now();
    done();
  });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const wrongMethod = input.wrongMethod(request);
    if (wrongMethod !== undefined) return sendProblem(reply, wrongMethod);
    const route = `${request.method} ${request.url.split('?')[0] ?? ''}`;
    return sendProblem(reply, problem('not_found', 'noGatewayRoute', { route }));
  });
  app.addSchema(ProblemSchema);

  await app.register(cookie);
  await app.register(cors, {
    origin: (origin, cb) => {
      cb(null, origin !== undefined && config.corsOrigins.includes(origin));
    },
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: [
      'authorization',
      'content-type',
      'mcp-session-id',
      'mcp-protocol-version',
      'last-event-id',
      CSRF_HEADER,
      PROJECT_HEADER,
    ],
    exposedHeaders: [
      'retry-after',
      'www-authenticate',
      'mcp-session-id',
      'x-quota-metric',
      'x-quota-limit',
      'x-quota-used',
      'x-quota-remaining',
      'x-quota-reset',
    ],
    maxAge: 600,
  });
  await app.register(swagger, openApiOptions());
  const ctx: GatewayContext = {
    config,
    store,
    auth,
    engines,
    limiter: await installRateLimits(app),
    quotas,
    sessions,
    console: new ConsoleAuth(sessions, store, () => publicUrl),
    publicUrl: () => publicUrl,
    consoleUrl: () => config.consoleUrl ?? publicUrl,
  };

  app.get('/health/live', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/health', { schema: { hide: true } }, async (_request, reply) => {
    try {
      await ping(pool);
      return { status: 'ok', version: VERSION };
    } catch {
      return sendProblem(reply.header('retry-after', '5'), problem('database_unavailable', 'controlPlane'));
    }
  });
  app.get('/version', { schema: { hide: true } }, async () => ({ version: VERSION, service: 'mnemos-gateway' }));

  memoryRoutes(app, ctx);
  const handlers = projectHandlers(ctx, clients);
  meProjectRoutes(app, ctx, handlers);
  adminRoutes(app, ctx, handlers);
  mcpRoutes(app, ctx);
  const getProvider = () => {
    if (oauth === undefined) throw new Error('OAuth server not ready');
    return oauth.provider;
  };
  const signInThrottle = new SignInThrottle(config.signIn);
  accountRoutes(app, ctx, signInThrottle);
  consentRoutes(app, ctx, getProvider);

  // Client registrations are counted before oidc-provider reads them; past the allowance they are answered here.
  const admitRegistration = authenticateFirst(async (request: FastifyRequest) => {
    if (isClientRegistration(request.method, request.url)) {
      await admitCreation(ctx.limiter, request, 'clientRegistrations', config.clientRegistrations);
    }
  });
  // oidc-provider serves the OAuth endpoints itself (raw Node handler; Fastify does not parse these bodies).
  const delegate = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (oauth === undefined) {
      await sendProblem(reply, problem('starting', 'gateway'));
      return;
    }
    reply.hijack();
    oauth.handle(request.raw, reply.raw);
  };
  for (const { method, url } of OAUTH_ENDPOINTS) {
    app.route({
      method,
      url,
      schema: { hide: true },
      onRequest: [admitRegistration, delegate],
      handler: async () => undefined,
    });
  }

  app.get('/openapi.json', { schema: { hide: true } }, async () => openApiDocument(app, ctx));
  await consoleRoutes(app, config.consoleDir);

  // A deep accept queue: bursts of new connections (1,000 clients at once) must queue, not be reset.
  try {
    await app.listen({ port: config.port, host: config.host, backlog: 4096 });
  } catch (error) {
    // Nothing may keep the process alive after a failed start: the control-plane listener reconnects forever.
    await app.close();
    await quotas.close();
    await auth.close();
    await engines.close();
    await pool.end();
    throw listenError(error, config);
  }
  const address = app.server.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  if (publicUrl === '') publicUrl = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  oauth = createOAuthServer({
    pool,
    issuer: publicUrl,
    consoleUrl: ctx.consoleUrl(),
    corsOrigins: config.corsOrigins,
    secrets,
    trustProxy: config.trustProxy,
    evict: (e) => auth.evict(e),
  });
  auth.tokenResolver = oauth.resolveToken;

  const prune = setInterval(() => {
    pruneOAuthStore(pool).catch(() => undefined);
    sessions.prune().catch(() => undefined);
  }, 10 * 60_000);
  prune.unref();

  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`,
    app,
    config,
    flushQuotas: () => quotas.flush(true),
    quotaUnitsInFlight: () => quotas.unitsInFlight(),
    async close() {
      clearInterval(prune);
      await app.close();
      await quotas.close();
      await auth.close();
      await engines.close();
      await pool.end();
    },
  };
}
