import { serveThread, threadData, transferred } from '../util/thread.js';

/** A request as the main thread prepared it, its body already read. */
export interface PreparedRequest {
  url: string;
  method: string;
  headers: Array<[string, string]>;
  body: ArrayBuffer | undefined;
  /** Per-attempt timeout in ms (0: none), counted from the moment the request leaves the queue. */
  timeoutMs: number;
}

/** A response read in full. */
export interface WholeAnswer {
  status: number;
  statusText: string;
  headers: Array<[string, string]>;
  body: ArrayBuffer;
}

/**
 * The worker-thread side of the LLM transport (transport.ts): it holds the cap of calls in flight and the queue of
 * prepared requests, so the next request leaves the moment an answer is in, whatever the main thread is doing. It
 * emits a request's number when that request leaves.
 */
async function open(emit: (sentId: number) => void) {
  const { limit } = threadData() as { limit: number };
  let active = 0;
  /** Requests waiting for a slot, oldest first (a Map keeps insertion order). */
  const queued = new Map<number, { go: () => void; cancel: (error: Error) => void }>();
  const running = new Map<number, AbortController>();
  const pump = () => {
    for (const [id, waiting] of queued) {
      if (active >= limit) return;
      queued.delete(id);
      active++;
      waiting.go();
    }
  };

  async function send(id: number, request: PreparedRequest) {
    const controller = new AbortController();
    running.set(id, controller);
    // The attempt's timeout starts when the request leaves, not while it waits its turn in the queue. A plain timer,
    // not AbortSignal.timeout: a timeout signal held only by AbortSignal.any can be garbage-collected and never fire.
    const signal = controller.signal;
    const timer =
      request.timeoutMs > 0
        ? setTimeout(
            () => controller.abort(new DOMException('The operation timed out.', 'TimeoutError')),
            request.timeoutMs,
          )
        : undefined;
    emit(id);
    try {
      const { url, method, headers, body } = request;
      const r = await fetch(url, { method, headers, body, signal });
      const answer: WholeAnswer = {
        status: r.status,
        statusText: r.statusText,
        headers: [...r.headers],
        body: await r.arrayBuffer(),
      };
      return transferred(answer, [answer.body]);
    } catch (error) {
      throw signal.aborted && signal.reason instanceof Error ? signal.reason : error;
    } finally {
      clearTimeout(timer);
      running.delete(id);
    }
  }

  return {
    /** Sends `request` once a slot is free; `id` names it for `abort` and for the event emitted when it leaves. */
    async fetch(id: number, request: PreparedRequest) {
      await new Promise<void>((go, cancel) => {
        queued.set(id, { go, cancel });
        pump();
      });
      try {
        return await send(id, request);
      } finally {
        active--;
        pump();
      }
    },
    /** A queued request is dropped (its call fails with an AbortError); one in flight is cancelled. */
    abort(id: number): void {
      const waiting = queued.get(id);
      if (!waiting) return running.get(id)?.abort();
      queued.delete(id);
      waiting.cancel(Object.assign(new Error('This operation was aborted'), { name: 'AbortError' }));
    },
  };
}

export type TransportThread = Awaited<ReturnType<typeof open>>;

serveThread(open);
