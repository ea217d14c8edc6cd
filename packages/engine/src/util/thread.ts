import { parentPort, Worker, workerData, type ResourceLimits, type Transferable } from 'node:worker_threads';

/**
 * The one way the engine talks to its worker threads (the embedding model, the embedded database, the LLM transport):
 * a module beside the caller serves named async methods (`serveThread`), and the main thread calls them by name
 * (`ThreadClient.call`), each call answered by its number. A thread can also send events (log lines, progress) that
 * belong to no call.
 *
 * Errors cross as plain fields (an Error loses its extra fields crossing threads) and are rebuilt as Errors with the
 * same message, name and fields, so a caller still tests a Postgres error's `code` or an abort's `name`.
 */

/** What a thread offers: methods called by name with arguments that can be cloned across threads. */
export type ThreadApi = Record<string, (...args: never[]) => unknown>;

/** An answer whose buffers move to the main thread instead of being copied (see `transferred`). */
export class Transferred<T> {
  constructor(
    readonly value: T,
    readonly transfer: readonly Transferable[],
  ) {}
}

/** Wraps a method's answer so that `transfer` (its buffers) moves to the main thread instead of being copied. */
export function transferred<T>(value: T, transfer: readonly Transferable[]): Transferred<T> {
  return new Transferred(value, transfer);
}

/** The value a call of `method` resolves with on the main thread. */
export type Answer<Api extends ThreadApi, M extends keyof Api> =
  Awaited<ReturnType<Api[M]>> extends Transferred<infer V> ? V : Awaited<ReturnType<Api[M]>>;

/** An error as plain values: message, name, and its own string and number fields (a SQLSTATE `code`, `detail`...). */
export type ErrorFields = { message: string } & Record<string, string | number>;

type Request = { call: number; method: string; args: unknown[] };

type Reply =
  | { ready: true }
  | { startFailed: ErrorFields }
  | { call: number; value: unknown }
  | { call: number; error: ErrorFields }
  | { event: unknown };

function describeError(error: unknown): ErrorFields {
  if (!(error instanceof Error)) return { message: String(error) };
  const out: ErrorFields = { message: error.message, name: error.name };
  for (const [key, value] of Object.entries(error)) {
    if (typeof value === 'string' || typeof value === 'number') out[key] = value;
  }
  return out;
}

/** An Error with the thread's error's message, name and fields. */
function rebuildError(fields: ErrorFields): Error {
  const { message, name, ...rest } = fields;
  return Object.assign(new Error(message), rest, name === undefined ? {} : { name });
}

/**
 * The thread's side: `open` builds the methods (loading a model, opening a database), with `emit` to send events;
 * once it resolves, the main thread's `ThreadClient.start` resolves too. A failure in `open` rejects that start with
 * the original error. Calls run as they arrive, each answered when its promise settles.
 */
export function serveThread<Api extends ThreadApi>(open: (emit: (event: unknown) => void) => Promise<Api>): void {
  const port = parentPort;
  if (!port) throw new Error('serveThread runs only inside a worker thread');
  const reply = (message: Reply, transfer: readonly Transferable[] = []) => port.postMessage(message, transfer);
  const opened = open((event) => reply({ event }));
  // Calls may arrive before the methods are built (a client that does not wait for the start); they wait for them.
  port.on('message', ({ call, method, args }: Request) => {
    const run = async () => {
      const api = await opened;
      const fn = api[method] as ((...a: unknown[]) => unknown) | undefined;
      if (typeof fn !== 'function') throw new Error(`the thread has no method ${method}`);
      return fn.apply(api, args);
    };
    run().then(
      (value) => {
        if (value instanceof Transferred) reply({ call, value: value.value }, value.transfer);
        else reply({ call, value });
      },
      (error: unknown) => reply({ call, error: describeError(error) }),
    );
  });
  opened.then(
    () => reply({ ready: true }),
    (error: unknown) => reply({ startFailed: describeError(error) }),
  );
}

/** The data the thread was started with; the thread module states its shape (it is the one that `start` sent). */
export function threadData(): unknown {
  return workerData;
}

export interface ThreadOptions<Event> {
  /** What was passed to the thread (read there with `threadData`). */
  data?: unknown;
  /** Events the thread emits, from its start on. */
  onEvent?: (event: Event) => void;
  /** The error every waiting and later call fails with once the thread has stopped unasked. */
  stopped: (exitCode: number) => Error;
  /** Limits of the thread's own JavaScript heap (see `SMALL_YOUNG_GENERATION`). */
  resourceLimits?: ResourceLimits;
}

/**
 * For threads whose JavaScript is glue around native or WebAssembly work (the model, the embedded database): a young
 * generation of 3 MB instead of V8's default limit of 48 MB. Such a thread allocates few objects, but each call leaves
 * ArrayBuffers behind (input and output tensors, result rows), which only a collection frees; with the default, each
 * thread keeps tens of MB of new space and of dead buffers resident. A small young generation is collected every few
 * calls, at a cost too small to measure next to the work it wraps.
 */
export const SMALL_YOUNG_GENERATION: ResourceLimits = { maxYoungGenerationSizeMb: 3 };

/**
 * The main thread's side of a thread serving `Api`. The thread is referenced only while a call waits, so a thread
 * nobody closed never keeps the process alive. Once the thread has failed, every waiting call and every later one
 * fails with the reason instead of waiting for ever.
 */
export class ThreadClient<Api extends ThreadApi, Event = never> {
  /** Settles when the thread's methods are built: resolves, or rejects with the thread's error. */
  readonly ready: Promise<void>;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private next = 0;
  private failure: Error | undefined;
  private readonly worker: Worker;

  /**
   * Starts the thread on the module `name` (its file name without extension) beside `callerUrl`. Calls may be made at
   * once; they wait for the thread to open, and fail with its error if it does not.
   */
  constructor(callerUrl: string, name: string, options: ThreadOptions<Event>) {
    const worker = (this.worker = startModuleThread(callerUrl, name, options.data, options.resourceLimits));
    this.ready = new Promise<void>((resolve, reject) => {
      const fail = (error: Error) => {
        reject(error);
        this.failAll(error);
      };
      worker.on('message', (message: Reply) => {
        if ('ready' in message) resolve();
        else if ('startFailed' in message) fail(rebuildError(message.startFailed));
        else if ('event' in message) options.onEvent?.(message.event as Event);
        else this.settle(message);
      });
      worker.on('error', fail);
      worker.on('exit', (code) => fail(options.stopped(code)));
    });
    // A client that does not wait for the start learns of a failed one from its calls.
    this.ready.catch(() => undefined);
    worker.unref();
  }

  /** Starts the thread and resolves once it has opened; a failed start stops it and rejects with its error. */
  static async start<Api extends ThreadApi, Event = never>(
    callerUrl: string,
    name: string,
    options: ThreadOptions<Event>,
  ): Promise<ThreadClient<Api, Event>> {
    const client = new ThreadClient<Api, Event>(callerUrl, name, options);
    // Referenced while it starts, so the process waits for the start's outcome.
    client.worker.ref();
    try {
      await client.ready;
    } catch (error) {
      await client.worker.terminate();
      throw error;
    }
    if (client.pending.size === 0) client.worker.unref();
    return client;
  }

  /** Why the thread failed, once it has. */
  get failed(): Error | undefined {
    return this.failure;
  }

  /** Calls `method` on the thread; `transfer` lists argument buffers that move to the thread rather than copies. */
  call<M extends keyof Api & string>(
    method: M,
    args: Parameters<Api[M]>,
    transfer: readonly Transferable[] = [],
  ): Promise<Answer<Api, M>> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const call = this.next++;
      this.pending.set(call, { resolve: resolve as (value: unknown) => void, reject });
      if (this.pending.size === 1) this.worker.ref();
      this.worker.postMessage({ call, method, args } satisfies Request, transfer);
    });
  }

  /** Stops the thread at once; waiting and later calls fail with `reason`. */
  async terminate(reason: Error = new Error('the thread was stopped')): Promise<void> {
    this.failAll(reason);
    await this.worker.terminate();
  }

  private settle(reply: { call: number; value: unknown } | { call: number; error: ErrorFields }): void {
    const p = this.pending.get(reply.call);
    if (!p) return;
    this.pending.delete(reply.call);
    if (this.pending.size === 0) this.worker.unref();
    if ('error' in reply) p.reject(rebuildError(reply.error));
    else p.resolve(reply.value);
  }

  /** The thread is gone: fails every waiting call, and every later one. */
  private failAll(error: Error): void {
    this.failure ??= error;
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }
}

/**
 * Starts a worker thread on a module next to the caller: `name` is its file name without extension. Compiled, the
 * worker runs `name.js`. From source (tests and benchmarks run the .ts files through tsx), a worker does not inherit
 * the parent's `--import tsx`, so it registers tsx itself before loading `name.ts`.
 */
function startModuleThread(
  callerUrl: string,
  name: string,
  workerData: unknown,
  resourceLimits: ResourceLimits = {},
): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, callerUrl), { workerData, resourceLimits });
  const entry = new URL(`./${name}.ts`, callerUrl).href;
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap =
    `import(${JSON.stringify(tsx)})` + `.then((api) => { api.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(bootstrap, { eval: true, workerData, resourceLimits });
}
