import { wholeResponse, type LlmTransport } from './transport.js';
import { LlmError } from './types.js';
import { errorMessage } from '../util/error-message.js';

/**
 * The HTTP layer under both SDKs: a fetch that times out each attempt, and retries 429, 5xx, timeouts and network
 * errors with exponential backoff and jitter, honouring Retry-After (seconds or an HTTP date) and retry-after-ms.
 * The SDKs' own retries are switched off so one policy (and one set of settings) covers every provider.
 */
export interface RetryPolicy {
  timeoutMs: number;
  maxRetries: number;
  /** First backoff delay; doubles per retry, capped at maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  onRetry?: (reason: string, delayMs: number) => void;
}

export const BASE_DELAY_MS = 250;
export const MAX_DELAY_MS = 8000;

/**
 * The SDKs' own bound on a whole call. It must never fire before the fetch layer has used its attempts (else a provider
 * that keeps timing out reports "cancelled" instead of the timeout), so it allows every attempt, the longest backoffs
 * (Retry-After is capped at four times the longest delay) and a wait for a transport slot on a busy engine.
 */
export function wholeCallBoundMs(config: { timeoutMs: number; maxRetries: number }): number {
  return (config.timeoutMs + 4 * MAX_DELAY_MS) * (config.maxRetries + 1) + 600_000;
}

const RETRY_STATUS = new Set([408, 409, 429, 500, 502, 503, 504]);

export function retryDelayMs(headers: Headers | undefined, attempt: number, policy: RetryPolicy): number {
  const ms = headers?.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Math.min(Number(ms), policy.maxDelayMs * 4);
  const after = headers?.get('retry-after');
  if (after) {
    const seconds = Number(after);
    if (Number.isFinite(seconds)) return Math.min(Math.max(0, seconds * 1000), policy.maxDelayMs * 4);
    const date = Date.parse(after);
    if (!Number.isNaN(date)) return Math.min(Math.max(0, date - Date.now()), policy.maxDelayMs * 4);
  }
  const backoff = Math.min(policy.baseDelayMs * 2 ** attempt, policy.maxDelayMs);
  return backoff * (0.75 + Math.random() * 0.5);
}

function sleep(ms: number, signal: AbortSignal | null | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new LlmError('The LLM call was cancelled.', 'aborted'));
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new LlmError('The LLM call was cancelled.', 'aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * One attempt that times out after `ms` (a TimeoutError) or when `outer` aborts. A timer of its own rather than
 * AbortSignal.timeout: a timeout signal referenced only through AbortSignal.any can be garbage-collected and never fire.
 */
async function fetchWithin(
  ms: number,
  input: Parameters<typeof fetch>[0],
  init: RequestInit | undefined,
  outer: AbortSignal | undefined,
): Promise<Response> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException('The operation timed out.', 'TimeoutError')), ms);
  const unfollow = follow(outer, controller);
  try {
    // The body is read inside the attempt, so a server that sends headers and then stalls times out too.
    const response = await fetch(input, { ...init, signal: controller.signal });
    return wholeResponse(response.status, response.statusText, response.headers, await response.arrayBuffer());
  } finally {
    clearTimeout(timer);
    unfollow();
  }
}

/** Aborts `controller` when `outer` aborts (at once if it has); answers what stops following it. */
function follow(outer: AbortSignal | undefined, controller: AbortController): () => void {
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) onAbort();
  else outer?.addEventListener('abort', onAbort, { once: true });
  return () => outer?.removeEventListener('abort', onAbort);
}

type Attempt = (
  input: Parameters<typeof fetch>[0],
  init: RequestInit | undefined,
  outer: AbortSignal | undefined,
) => Promise<Response>;

/**
 * One streamed attempt: `ms` bounds the wait for the response headers and then each silence between body chunks, so a
 * provider that stops sending mid-answer times out without bounding how long a whole answer may take. The body is
 * handed on as it arrives.
 */
async function fetchStreaming(
  ms: number,
  input: Parameters<typeof fetch>[0],
  init: RequestInit | undefined,
  outer: AbortSignal | undefined,
): Promise<Response> {
  const controller = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new DOMException('The operation timed out.', 'TimeoutError'));
    }, ms);
  };
  arm();
  const unfollow = follow(outer, controller);
  const release = () => {
    clearTimeout(timer);
    unfollow();
  };
  let response: Response;
  try {
    response = await fetch(input, { ...init, signal: controller.signal });
  } catch (error) {
    release();
    throw error;
  }
  if (!response.body || !response.ok) {
    // Error answers are small: read them whole within the attempt, as the unary path does.
    try {
      return wholeResponse(response.status, response.statusText, response.headers, await response.arrayBuffer());
    } finally {
      release();
    }
  }
  const reader: ReadableStreamDefaultReader<Uint8Array> = (response.body as ReadableStream<Uint8Array>).getReader();
  arm();
  const body = new ReadableStream<Uint8Array>({
    async pull(stream) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          release();
          stream.close();
          return;
        }
        arm();
        stream.enqueue(value);
      } catch (error) {
        release();
        stream.error(
          timedOut
            ? new LlmError(`the LLM stopped sending for ${ms} ms (MNEMOS_API_LLM_TIMEOUT_MS) mid-answer.`, 'timeout')
            : outer?.aborted
              ? new LlmError('The LLM call was cancelled.', 'aborted')
              : error,
        );
      }
    },
    cancel(reason) {
      release();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** `transport`: send through the LLM transport thread (it starts each attempt's timeout when the request leaves). */
export function resilientFetch(policy: RetryPolicy, transport?: LlmTransport): typeof fetch {
  const attempt: Attempt = transport
    ? (input, init, outer) =>
        transport.fetch(input, { ...init, signal: outer ?? null }, { timeoutMs: policy.timeoutMs })
    : (input, init, outer) => fetchWithin(policy.timeoutMs, input, init, outer);
  return retrying(policy, attempt);
}

/**
 * The fetch under streamed calls: the same retries, but only until an answer starts (a stream cut off mid-answer is
 * not replayed), and the body is not read ahead. Streamed calls leave from the main thread, not the transport thread,
 * which hands over whole bodies only; the LLM client's concurrency cap still admits them.
 */
export function streamingFetch(policy: RetryPolicy): typeof fetch {
  return retrying(policy, (input, init, outer) => fetchStreaming(policy.timeoutMs, input, init, outer));
}

function retrying(policy: RetryPolicy, send: Attempt): typeof fetch {
  return async (input, init) => {
    const outer = init?.signal ?? undefined;
    // Bodies the SDKs send are strings; anything else cannot be replayed, so it gets one attempt.
    const replayable = init?.body === undefined || init.body === null || typeof init.body === 'string';
    for (let attempt = 0; ; attempt++) {
      const last = !replayable || attempt >= policy.maxRetries;
      let response: Response;
      try {
        response = await send(input, init, outer);
      } catch (error) {
        if (outer?.aborted) throw new LlmError('The LLM call was cancelled.', 'aborted');
        const timedOut = (error as Error).name === 'TimeoutError';
        const reason = timedOut
          ? `the LLM did not answer within ${policy.timeoutMs} ms (MNEMOS_API_LLM_TIMEOUT_MS)`
          : `the LLM could not be reached (${errorMessage(error)})`;
        if (last)
          throw new LlmError(
            `${reason}; gave up after ${attempt + 1} attempt(s).`,
            timedOut ? 'timeout' : 'unavailable',
          );
        const delay = retryDelayMs(undefined, attempt, policy);
        policy.onRetry?.(reason, delay);
        await sleep(delay, outer);
        continue;
      }
      if (!RETRY_STATUS.has(response.status) || last) return response;
      const delay = retryDelayMs(response.headers, attempt, policy);
      policy.onRetry?.(`HTTP ${response.status}`, delay);
      await response.body?.cancel().catch(() => undefined);
      await sleep(delay, outer);
    }
  };
}
