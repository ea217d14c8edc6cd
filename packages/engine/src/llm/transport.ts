import { Worker } from 'node:worker_threads';

/**
 * The network side of LLM calls, in a worker thread of its own. The engine's main thread also runs the embedded
 * database and the embedding model, each of which holds it for milliseconds at a time; a response that arrived during
 * such a stretch used to wait for it before the next call could go out, and the LLM sat idle meanwhile. Here the worker
 * owns the cap of calls in flight (MNEMOS_API_LLM_CONCURRENCY) and a short queue of requests the main thread prepared
 * in advance: the moment one answer is in, the next request leaves, whatever the main thread is doing. Answers travel
 * back as whole bodies (no streaming is used).
 *
 * Plain JavaScript evaluated in the worker, so it runs the same from the TypeScript sources and from dist/.
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const limit = workerData.limit;
const queue = [];
const running = new Map();
let active = 0;
const fail = (id, error) => parentPort.postMessage({ id, error: { name: error.name || 'Error', message: error.message || String(error) } });
async function run(m) {
  const controller = new AbortController();
  running.set(m.id, controller);
  // The attempt's timeout starts when the request leaves, not while it waits its turn in the queue. A plain timer, not
  // AbortSignal.timeout: a timeout signal held only by AbortSignal.any can be garbage-collected and then never fires.
  const signal = controller.signal;
  const timer = m.timeoutMs > 0
    ? setTimeout(() => controller.abort(new DOMException('The operation timed out.', 'TimeoutError')), m.timeoutMs)
    : undefined;
  parentPort.postMessage({ id: m.id, sent: true });
  try {
    const r = await fetch(m.url, { method: m.method, headers: m.headers, body: m.body, signal });
    const body = await r.arrayBuffer();
    parentPort.postMessage({ id: m.id, status: r.status, statusText: r.statusText, headers: [...r.headers], body }, [body]);
  } catch (error) {
    fail(m.id, signal.reason && signal.aborted ? signal.reason : error);
  } finally {
    clearTimeout(timer);
    running.delete(m.id);
  }
}
function pump() {
  while (active < limit && queue.length > 0) {
    const m = queue.shift();
    active++;
    run(m).finally(() => {
      active--;
      pump();
    });
  }
}
parentPort.on('message', (m) => {
  if (m.type === 'fetch') {
    queue.push(m);
    pump();
  } else if (m.type === 'abort') {
    const i = queue.findIndex((q) => q.id === m.id);
    if (i >= 0) {
      queue.splice(i, 1);
      fail(m.id, { name: 'AbortError', message: 'This operation was aborted' });
    } else running.get(m.id)?.abort();
  }
});
`;

interface Reply {
  id: number;
  sent?: true;
  status?: number;
  statusText?: string;
  headers?: Array<[string, string]>;
  body?: ArrayBuffer;
  error?: { name: string; message: string };
}

interface Pending {
  resolve: (r: Response) => void;
  reject: (e: Error) => void;
  onSent: (() => void) | undefined;
  cleanup: () => void;
}

/** Statuses whose Response may carry no body. */
const NULL_BODY = new Set([101, 204, 205, 304]);

/** A Response around a body already read in full (both fetch paths read the whole body within the attempt). */
export function wholeResponse(status: number, statusText: string, headers: Headers | Array<[string, string]>, body: ArrayBuffer | null): Response {
  return new Response(NULL_BODY.has(status) ? null : body, { status, statusText, headers });
}

export interface DispatchOptions {
  /** Per-attempt timeout, counted from the moment the request leaves the queue. */
  timeoutMs?: number;
  /** Called when the request actually leaves (it may wait for a free slot first). */
  onSent?: () => void;
}

export class LlmTransport {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;

  /** `limit`: HTTP requests in flight at once; further ones wait in the worker, ready to leave. */
  constructor(readonly limit: number) {
    this.worker = new Worker(WORKER, { eval: true, workerData: { limit } });
    this.worker.unref();
    this.worker.on('message', (m: Reply) => this.settle(m));
    this.worker.on('error', (error) => this.failAll(error));
    this.worker.on('exit', () => this.failAll(new Error('the LLM transport thread exited')));
  }

  /** Requests waiting for their answer (queued or in flight). */
  get outstanding(): number {
    return this.pending.size;
  }

  /** A fetch that runs in the worker. */
  readonly fetch = (input: string | URL | Request, init?: RequestInit, options: DispatchOptions = {}): Promise<Response> =>
    this.dispatch(input, init, options);

  private async dispatch(input: string | URL | Request, init: RequestInit | undefined, options: DispatchOptions): Promise<Response> {
    if (this.closed) throw new Error('the LLM transport is closed');
    const signal = init?.signal ?? undefined;
    signal?.throwIfAborted();
    const request = new Request(input, { ...init, signal: null });
    const body = request.body ? await request.arrayBuffer() : undefined;
    signal?.throwIfAborted();
    const id = this.nextId++;
    return new Promise<Response>((resolve, reject) => {
      const onAbort = () => this.worker.postMessage({ type: 'abort', id });
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, {
        resolve, reject, onSent: options.onSent,
        cleanup: () => signal?.removeEventListener('abort', onAbort),
      });
      if (this.pending.size === 1) this.worker.ref();
      this.worker.postMessage(
        { type: 'fetch', id, url: request.url, method: request.method, headers: [...request.headers], body, timeoutMs: options.timeoutMs ?? 0 },
        body ? [body] : [],
      );
    });
  }

  private settle(m: Reply): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    if (m.sent) {
      p.onSent?.();
      return;
    }
    this.pending.delete(m.id);
    if (this.pending.size === 0) this.worker.unref();
    p.cleanup();
    if (m.error) {
      const error = new Error(m.error.message);
      error.name = m.error.name;
      p.reject(error);
      return;
    }
    const status = m.status ?? 500;
    p.resolve(wholeResponse(status, m.statusText ?? '', m.headers ?? [], m.body ?? null));
  }

  private failAll(error: Error): void {
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      p.cleanup();
      p.reject(error);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.failAll(new Error('the LLM transport is closed'));
    await this.worker.terminate();
  }
}
