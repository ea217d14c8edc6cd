// Forwarding to engines: one keep-alive connection pool per engine, the engine token added, the answer streamed back.
// Engine failures become clear problems: unreachable 503 with Retry-After (quickly: short connect timeout), timeouts
// 504, engine 5xx 502 (except 503, whose problem is passed through).
import { Readable } from 'node:stream';
import { Pool, errors as undiciErrors } from 'undici';
import { problem, Problem } from '@mnemos/problems';

/** Header of an engine's refusal of a retain over its bound: how many new memories the retain would store. */
export const WOULD_STORE_HEADER = 'x-mnemos-would-store';
/** Header by which the gateway bounds the new memories one retain may store (the units it reserved). */
export const MAX_NEW_MEMORIES_HEADER = 'x-mnemos-max-new-memories';

export interface EngineResponse {
  status: number;
  headers: Record<string, string>;
  body: Readable;
}

export interface ForwardRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | string[]> | undefined;
  body?: unknown;
  /** A raw body forwarded as is (MCP), with its content type. */
  rawBody?: Buffer | undefined;
  contentType?: string | undefined;
  accept?: string | undefined;
  extraHeaders?: Record<string, string> | undefined;
  signal?: AbortSignal | undefined;
}

const PASS_HEADERS = [
  'content-type',
  'content-length',
  'retry-after',
  'mcp-session-id',
  'cache-control',
  'location',
  WOULD_STORE_HEADER,
];

/** Errors before a connection to the engine exists: the request never reached it. */
const NOT_CONNECTED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * A forwarding failure. `mayHaveRun` says whether the engine may have carried the request out all the same (it timed
 * out, or the connection broke after the request was sent): the gateway then keeps its quota units counted, since a
 * retain the gateway gave up on can still be stored.
 */
export class EngineProblem extends Problem {
  constructor(
    readonly mayHaveRun: boolean,
    failure: Problem,
  ) {
    super(failure.code, failure.detail, { headers: failure.headers });
  }
}

const RETRY_SOON = { headers: { 'retry-after': '5' } };

export class Engines {
  private readonly pools = new Map<string, { pool: Pool; token: string; url: string }>();

  constructor(
    engines: Map<string, { url: string; token: string }>,
    private readonly timeoutMs: number,
    connectTimeoutMs: number,
  ) {
    for (const [name, e] of engines) {
      this.pools.set(name, {
        pool: new Pool(e.url, {
          connections: 256,
          pipelining: 1,
          keepAliveTimeout: 30_000,
          connect: { timeout: connectTimeoutMs },
        }),
        token: e.token,
        url: e.url,
      });
    }
  }

  has(name: string): boolean {
    return this.pools.has(name);
  }

  names(): string[] {
    return [...this.pools.keys()];
  }

  async forward(engine: string, req: ForwardRequest): Promise<EngineResponse> {
    const target = this.pools.get(engine);
    if (target === undefined) {
      throw problem('engine_unavailable', 'notConfigured', { engine }, { headers: { 'retry-after': '30' } });
    }
    let path = req.path;
    if (req.query !== undefined) {
      const qs = new URLSearchParams();
      for (const [k, v] of Object.entries(req.query)) {
        for (const item of Array.isArray(v) ? v : [v]) qs.append(k, item);
      }
      const s = qs.toString();
      if (s.length > 0) path += `?${s}`;
    }
    const headers: Record<string, string> = { authorization: `Bearer ${target.token}`, ...(req.extraHeaders ?? {}) };
    let body: string | Buffer | undefined;
    if (req.rawBody !== undefined) {
      body = req.rawBody;
      headers['content-type'] = req.contentType ?? 'application/json';
    } else if (req.body !== undefined) {
      body = JSON.stringify(req.body);
      headers['content-type'] = 'application/json';
    }
    if (req.accept !== undefined) headers['accept'] = req.accept;
    try {
      const res = await target.pool.request({
        method: req.method,
        path,
        headers,
        body,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        signal: req.signal,
      });
      const out: Record<string, string> = {};
      for (const h of PASS_HEADERS) {
        const v = res.headers[h];
        if (typeof v === 'string') out[h] = v;
      }
      if (res.statusCode >= 500 && res.statusCode !== 503) {
        res.body.resume();
        throw new EngineProblem(false, problem('engine_error', 'failed'));
      }
      return { status: res.statusCode, headers: out, body: res.body };
    } catch (err) {
      if (err instanceof Problem) throw err;
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'string' && NOT_CONNECTED.has(code)) {
        throw new EngineProblem(false, problem('engine_unavailable', 'unreachable', RETRY_SOON));
      }
      if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
        throw new EngineProblem(true, problem('engine_timeout', 'tooSlow', RETRY_SOON));
      }
      throw new EngineProblem(true, problem('engine_unavailable', 'connectionBroke', RETRY_SOON));
    }
  }

  /** Reads a whole JSON answer (for the few paths the gateway must inspect). */
  static async json(res: EngineResponse): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const chunk of res.body) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }

  static fromJson(status: number, headers: Record<string, string>, value: unknown): EngineResponse {
    const text = JSON.stringify(value);
    const h = { ...headers, 'content-length': String(Buffer.byteLength(text)) };
    return { status, headers: h, body: Readable.from([Buffer.from(text)]) };
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.pool.close().catch(() => undefined)));
  }
}
