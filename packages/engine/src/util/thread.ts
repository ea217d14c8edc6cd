import { Worker } from 'node:worker_threads';

/**
 * Starts a worker thread on a module next to the caller: `name` is its file name without extension. Compiled, the
 * worker runs `name.js`. From source (tests and benchmarks run the .ts files through tsx), a worker does not inherit
 * the parent's `--import tsx`, so it registers tsx itself before loading `name.ts`.
 */
export function startModuleThread(callerUrl: string, name: string, workerData: unknown): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, callerUrl), { workerData });
  const entry = new URL(`./${name}.ts`, callerUrl).href;
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(bootstrap, { eval: true, workerData });
}

/**
 * Requests to a worker thread, numbered and answered by number (the embedding and database threads). The worker is
 * referenced only while a request waits, so a thread nobody closed never keeps the process alive. Once the thread has
 * failed, every waiting request and every later one fails with the reason instead of waiting for ever.
 */
export class ThreadRequests<T> {
  private readonly pending = new Map<number, { resolve: (value: T) => void; reject: (error: Error) => void }>();
  private seq = 0;
  private failure: Error | undefined;

  constructor(private readonly worker: Worker) {}

  /** Why the thread failed, once it has. */
  get failed(): Error | undefined {
    return this.failure;
  }

  /** The number the next request will get. */
  get nextSeq(): number {
    return this.seq;
  }

  /** Posts the message built for the next number; resolves or rejects when its answer is settled by that number. */
  send(message: (seq: number) => unknown): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const seq = this.seq++;
      this.pending.set(seq, { resolve, reject });
      if (this.pending.size === 1) this.worker.ref();
      this.worker.postMessage(message(seq));
    });
  }

  resolve(seq: number, value: T): void {
    this.take(seq)?.resolve(value);
  }

  reject(seq: number, error: Error): void {
    this.take(seq)?.reject(error);
  }

  /** The thread is gone: fails every waiting request, and every later one. */
  failAll(error: Error): void {
    this.failure ??= error;
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }

  private take(seq: number) {
    const p = this.pending.get(seq);
    this.pending.delete(seq);
    if (this.pending.size === 0) this.worker.unref();
    return p;
  }
}
