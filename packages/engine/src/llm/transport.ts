import { ThreadClient } from '../util/thread.js';
import type { TransportThread } from './transport-thread.js';

/** Statuses whose Response may carry no body. */
const NULL_BODY = new Set([101, 204, 205, 304]);

/** A Response around a body already read in full (both fetch paths read the whole body within the attempt). */
export function wholeResponse(
  status: number,
  statusText: string,
  headers: Headers | Array<[string, string]>,
  body: ArrayBuffer | null,
): Response {
  return new Response(NULL_BODY.has(status) ? null : body, { status, statusText, headers });
}

export interface DispatchOptions {
  /** Per-attempt timeout, counted from the moment the request leaves the queue. */
  timeoutMs?: number;
  /** Called when the request actually leaves (it may wait for a free slot first). */
  onSent?: () => void;
}

/**
 * The network side of LLM calls, in a worker thread of its own (transport-thread.ts). The engine's main thread also
 * runs the embedded database and the embedding model, each of which holds it for milliseconds at a time; a response
 * that arrived during such a stretch used to wait for it before the next call could go out, and the LLM sat idle
 * meanwhile. Here the worker owns the cap of calls in flight (MNEMOS_API_LLM_CONCURRENCY) and a short queue of requests
 * the main thread prepared in advance: the moment one answer is in, the next request leaves, whatever the main thread
 * is doing. Answers travel back as whole bodies (no streaming is used).
 */
export class LlmTransport {
  private readonly thread: ThreadClient<TransportThread, number>;
  /** What to call when each waiting request leaves the worker's queue, by request number. */
  private readonly onSent = new Map<number, () => void>();
  private nextId = 1;
  private waiting = 0;
  private closed = false;

  /** `limit`: HTTP requests in flight at once; further ones wait in the worker, ready to leave. */
  constructor(readonly limit: number) {
    this.thread = new ThreadClient(import.meta.url, 'transport-thread', {
      data: { limit },
      onEvent: (id) => this.onSent.get(id)?.(),
      stopped: () => new Error('the LLM transport thread exited'),
    });
  }

  /** Requests waiting for their answer (queued or in flight). */
  get outstanding(): number {
    return this.waiting;
  }

  /** A fetch that runs in the worker. */
  readonly fetch = (
    input: string | URL | Request,
    init?: RequestInit,
    options: DispatchOptions = {},
  ): Promise<Response> => this.dispatch(input, init, options);

  private async dispatch(
    input: string | URL | Request,
    init: RequestInit | undefined,
    options: DispatchOptions,
  ): Promise<Response> {
    if (this.closed) throw new Error('the LLM transport is closed');
    const signal = init?.signal ?? undefined;
    signal?.throwIfAborted();
    const request = new Request(input, { ...init, signal: null });
    const body = request.body ? await request.arrayBuffer() : undefined;
    signal?.throwIfAborted();
    const id = this.nextId++;
    const onAbort = () => void this.thread.call('abort', [id]).catch(() => undefined);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (options.onSent) this.onSent.set(id, options.onSent);
    this.waiting++;
    try {
      const headers = [...request.headers];
      const prepared = { url: request.url, method: request.method, headers, body, timeoutMs: options.timeoutMs ?? 0 };
      const answer = await this.thread.call('fetch', [id, prepared], body ? [body] : []);
      return wholeResponse(answer.status, answer.statusText, answer.headers, answer.body);
    } finally {
      this.waiting--;
      signal?.removeEventListener('abort', onAbort);
      this.onSent.delete(id);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.thread.terminate(new Error('the LLM transport is closed'));
  }
}
