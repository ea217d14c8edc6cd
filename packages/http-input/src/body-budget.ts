import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { problem } from '@mnemos/problems';
import type { InputProblem } from './problems.js';

/**
 * Bounds the request bodies a server holds in memory at once. A request that declares a body takes its declared size
 * (a body without a length takes the body limit, the most it may grow to) from a per-connection and a global budget
 * before a byte of it is read, and gives it back when its response ends or its connection closes. A request that finds
 * no room is answered at once with a 503 and Retry-After, and its connection is closed, so its body is never buffered:
 * slow uploads in bulk cost at most the global budget, whatever their number.
 */
export interface BodyBudgetLimits {
  /** Largest accepted body (the server's body limit). */
  maxBodyBytes: number;
  /** Body bytes one connection may have in flight (pipelined requests share it). */
  perConnectionBytes: number;
  /** Body bytes all connections together may have in flight. */
  globalBytes: number;
}

/** The time limits and budgets of one server, as its settings give them. */
export interface ServerHttpLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  perConnectionBodyBytes: number;
  globalBodyBytes: number;
}

export function budgetOf(limits: ServerHttpLimits): Omit<BodyBudgetLimits, 'maxBodyBytes'> {
  return { perConnectionBytes: limits.perConnectionBodyBytes, globalBytes: limits.globalBodyBytes };
}

/**
 * Fastify options that make Node drop requests whose headers or body arrive too slowly. Node checks the limits on a
 * timer, so the timer runs at a fraction of the shorter limit to keep the limits close to what they say.
 */
export function serverLimits(limits: ServerHttpLimits) {
  const seconds = (ms: number): string => `${Math.round(ms / 100) / 10} s`;
  return {
    requestTimeout: limits.requestTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4))),
    },
    clientErrorHandler: clientErrorAnswer(
      `The request was not received in time (headers within ${seconds(limits.headersTimeoutMs)}, the whole request ` +
        `within ${seconds(limits.requestTimeoutMs)}); send it again on a faster link or in smaller parts.`,
    ),
  };
}

/** Sends a refusal the budget decided on as the server's own problem+json answer. */
export type BodyBudgetRefusal = (reply: FastifyReply, problem: InputProblem) => FastifyReply;

const RETRY_AFTER_S = 2;
/** The longest a refused connection stays open for its client to finish sending, once the answer is out. */
const LINGER_MAX_MS = 30_000;

export class BodyBudget {
  private inFlightBytes = 0;
  private readonly perSocket = new WeakMap<Socket, number>();

  constructor(private readonly limits: BodyBudgetLimits) {}

  /** Body bytes held by requests in flight right now. */
  get inFlight(): number {
    return this.inFlightBytes;
  }

  /**
   * The bytes a request may buffer: its declared length, or the body limit when it streams without one (`limit`: its
   * route's body limit, the server's by default).
   */
  claimFor(headers: FastifyRequest['headers'], limit = this.limits.maxBodyBytes): number {
    const declared = headers['content-length'];
    if (declared !== undefined) {
      const length = Number(declared);
      // A declared length over the limit is refused by the body parser before any byte is read.
      return Number.isFinite(length) && length > 0 && length <= limit ? length : 0;
    }
    return headers['transfer-encoding'] === undefined ? 0 : limit;
  }

  /** Takes `bytes` for a request on `socket`; answers why not when a budget is spent. */
  take(
    socket: Socket,
    bytes: number,
  ): { ok: true; release(): void } | { ok: false; busy: 'connectionFull' | 'serverFull' } {
    const onSocket = this.perSocket.get(socket) ?? 0;
    if (onSocket + bytes > this.limits.perConnectionBytes) {
      return { ok: false, busy: 'connectionFull' };
    }
    if (this.inFlightBytes + bytes > this.limits.globalBytes) {
      return { ok: false, busy: 'serverFull' };
    }
    this.inFlightBytes += bytes;
    this.perSocket.set(socket, onSocket + bytes);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        this.inFlightBytes -= bytes;
        const left = (this.perSocket.get(socket) ?? bytes) - bytes;
        if (left > 0) this.perSocket.set(socket, left);
        else this.perSocket.delete(socket);
      },
    };
  }

  /**
   * Adds the onRequest hook that claims each body's bytes. A body declared larger than the limit gets a 413 carrying
   * `tooLargeDetail`; a body that finds no room gets a 503 with Retry-After. Either way the answer goes out before the
   * body is read.
   */
  register(app: FastifyInstance, refuse: BodyBudgetRefusal, tooLargeDetail: string): void {
    app.addHook('onRequest', (request, reply, done) => {
      // A route may have a body limit of its own (an import); one that reads its body as a stream holds none of it at
      // once, so it claims nothing.
      const streamed = (request.routeOptions.config as { streamedBody?: boolean } | undefined)?.streamedBody === true;
      const limit = request.routeOptions.bodyLimit;
      if (this.declaresTooMuch(request.headers, limit)) {
        const detail =
          limit === this.limits.maxBodyBytes
            ? tooLargeDetail
            : `The body is larger than this route's limit of ${limit} bytes; send it in parts.`;
        refuseAndLinger(request, reply, refuse, problem('payload_too_large', 'stated', { detail }));
        return;
      }
      const bytes = streamed ? 0 : this.claimFor(request.headers, limit);
      if (bytes === 0) {
        done();
        return;
      }
      const claim = this.take(request.raw.socket, bytes);
      if (!claim.ok) {
        const retryAfter = { 'retry-after': String(RETRY_AFTER_S) };
        refuseAndLinger(request, reply, refuse, problem('server_busy', claim.busy, { headers: retryAfter }));
        return;
      }
      const socket = request.raw.socket;
      const release = (): void => {
        claim.release();
        socket.off('close', release);
      };
      reply.raw.once('close', release);
      socket.once('close', release);
      done();
    });
  }

  private declaresTooMuch(headers: FastifyRequest['headers'], limit: number): boolean {
    const declared = headers['content-length'];
    return declared !== undefined && Number(declared) > limit;
  }
}

/**
 * Answers a request whose body is not wanted, then closes its connection without a reset. Node discards what still
 * comes (never buffering it); once the answer is out the server stops sending, and closes the connection when the
 * client closes its side, after it has sent its body and read the answer (or after LINGER_MAX_MS at most). Closing
 * while the client still sends would reset the connection, and a client that sends its whole body before reading
 * (most HTTP libraries) would lose the answer; how long the rest of the body takes depends on the client's link, so
 * no fixed delay is long enough.
 */
function refuseAndLinger(
  request: FastifyRequest,
  reply: FastifyReply,
  refuse: BodyBudgetRefusal,
  problem: InputProblem,
): void {
  const socket = request.raw.socket;
  reply.raw.once('finish', () => {
    socket.end();
    socket.once('end', () => socket.destroy());
    const giveUp = setTimeout(() => socket.destroy(), LINGER_MAX_MS).unref();
    socket.once('close', () => clearTimeout(giveUp));
  });
  refuse(reply, problem);
}

/**
 * Answers errors Node raises on a connection before a request reaches the router (a request or its headers not received
 * within their time limits, oversized headers, unparsable HTTP) as problem+json, then closes the connection.
 */
export function clientErrorAnswer(timeoutDetail: string): (err: NodeJS.ErrnoException, socket: Socket) => void {
  return (err, socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const answer =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? problem('request_timeout', 'stated', { detail: timeoutDetail })
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? problem('headers_too_large', 'tooLarge')
          : problem('bad_request', 'notHttp');
    const body = JSON.stringify(answer.document());
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${answer.status} ${answer.title}\r\nConnection: close\r\n` +
          'Content-Type: application/problem+json\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  };
}
