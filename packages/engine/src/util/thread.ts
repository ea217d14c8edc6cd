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
