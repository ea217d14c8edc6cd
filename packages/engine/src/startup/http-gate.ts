import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { FastifyServerFactory, FastifyServerOptions } from 'fastify';
import { ConfigError } from '../config/load.js';
import { problem } from '@mnemos/problems';
import { livenessBody, warmingBody } from './health-bodies.js';
import type { Readiness } from './readiness.js';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** Seconds a caller is asked to wait (Retry-After) while the engine warms or stops. */
const RETRY_AFTER_SECONDS = 5;

/**
 * The engine's HTTP server, listening before anything slow starts: while the engine warms it answers liveness and
 * health itself and asks every other caller to retry; once the engine is ready it hands each request to the Fastify
 * app (which is built on this same server through Fastify's `serverFactory`); on stop it refuses new requests and
 * lets the ones in flight finish.
 */
export class HttpGate {
  readonly server: Server;
  private appHandler: Handler | undefined;
  private state: 'warming' | 'open' | 'stopping' = 'warming';

  /**
   * `http` holds the options Node takes only when a server is created (how often idle and slow connections are
   * checked against the header and request time limits); the limits themselves come again through serverFactory.
   */
  constructor(
    private readonly readiness: Readiness,
    http: ServerOptions = {},
    private readonly startedAt = Date.now(),
  ) {
    this.server = createServer(http, (request, response) => this.dispatch(request, response));
  }

  /** Binds the port; a taken or forbidden port or host is a configuration error naming the setting to change. */
  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const failed = (error: NodeJS.ErrnoException) => reject(listenError(error, port, host));
      this.server.once('error', failed);
      this.server.listen({ port, host }, () => {
        this.server.off('error', failed);
        const address = this.server.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  }

  /**
   * Fastify's `serverFactory`: Fastify gets this server and its request handler waits here until `open()`. Fastify
   * applies its timeouts only to servers it creates, so they are applied here.
   */
  readonly serverFactory: FastifyServerFactory = (handler, raw) => {
    this.appHandler = handler;
    const options = raw as FastifyServerOptions & { http?: ServerOptions };
    if (options.keepAliveTimeout !== undefined) this.server.keepAliveTimeout = options.keepAliveTimeout;
    if (options.requestTimeout !== undefined) this.server.requestTimeout = options.requestTimeout;
    if (options.connectionTimeout !== undefined) this.server.setTimeout(options.connectionTimeout);
    if (options.http?.headersTimeout !== undefined) this.server.headersTimeout = options.http.headersTimeout;
    const perSocket = options.maxRequestsPerSocket ?? 0;
    if (perSocket > 0) this.server.maxRequestsPerSocket = perSocket;
    return this.server;
  };

  /** From now on the Fastify app answers every request. */
  open(): void {
    if (this.appHandler === undefined) throw new Error('the app was not built on this server (serverFactory)');
    this.state = 'open';
  }

  /**
   * Stops accepting connections, answers new requests on open connections with 503, and waits for the requests in
   * flight; after `graceMs` the connections still open are cut.
   */
  async stop(graceMs: number): Promise<void> {
    this.state = 'stopping';
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    // A keep-alive connection becomes idle once its request is answered; closing idle ones lets close() complete.
    this.server.closeIdleConnections();
    const idleSweep = setInterval(() => this.server.closeIdleConnections(), 50);
    const deadline = setTimeout(() => this.server.closeAllConnections(), graceMs);
    try {
      await closed;
    } finally {
      clearInterval(idleSweep);
      clearTimeout(deadline);
    }
  }

  private dispatch(request: IncomingMessage, response: ServerResponse): void {
    if (this.state === 'open') {
      this.appHandler!(request, response);
      return;
    }
    const path = (request.url ?? '/').split('?')[0]!.replace(/\/+$/, '');
    if (path === '/health/live') {
      send(response, 200, 'application/json', livenessBody(this.startedAt));
      return;
    }
    response.setHeader('retry-after', String(RETRY_AFTER_SECONDS));
    if (this.state === 'stopping') {
      response.setHeader('connection', 'close');
      send(response, 503, 'application/problem+json', problem('stopping', 'shuttingDown').document());
      return;
    }
    const snapshot = this.readiness.snapshot();
    if (path === '/health') {
      send(response, 503, 'application/problem+json', warmingBody(snapshot));
      return;
    }
    const warming = problem('warming', 'starting', { stage: describeStage(snapshot) });
    send(response, 503, 'application/problem+json', warming.document());
  }
}

export function describeStage(snapshot: { stage: string; progress: number | undefined }): string {
  if (snapshot.progress === undefined) return snapshot.stage;
  return `${snapshot.stage}, ${Math.round(snapshot.progress * 100)}%`;
}

function send(response: ServerResponse, status: number, type: string, body: object): void {
  response.writeHead(status, { 'content-type': `${type}; charset=utf-8` }).end(JSON.stringify(body));
}

function listenError(error: NodeJS.ErrnoException, port: number, host: string): Error {
  switch (error.code) {
    case 'EADDRINUSE':
      return new ConfigError(
        `port ${port} on ${host} is already in use (another Mnemos engine or another program listens there); ` +
          'stop it, or set MNEMOS_API_PORT to a free port.',
      );
    case 'EACCES':
      return new ConfigError(
        `port ${port} needs privileges this process does not have; set MNEMOS_API_PORT to a port above 1023.`,
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return new ConfigError(
        `MNEMOS_API_HOST ${host} is not an address of this machine; set it to 0.0.0.0 (all) or 127.0.0.1 (local only).`,
      );
    default:
      return error;
  }
}
