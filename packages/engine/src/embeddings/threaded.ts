import { startModuleThread, ThreadRequests } from '../util/thread.js';
import type { Embedder } from './embedder.js';
import type { LocalEmbedderOptions } from './local.js';

export type ThreadRequest =
  | { type: 'embed'; seq: number; texts: string[]; kind: 'query' | 'document' }
  | { type: 'close' };

export type ThreadReply =
  | { type: 'ready'; id: string; dimension: number }
  | { type: 'log'; message: string }
  | { type: 'vectors'; seq: number; data: Float32Array }
  | { type: 'failed'; seq: number; message: string };

/**
 * The local ONNX model in a worker thread. onnxruntime-node runs inference synchronously on the calling thread, so on
 * the main thread every embedding blocked the event loop: HTTP, the database and recall's other arms waited for it.
 * In a worker, a recall's keyword arm and index sync run while its query embeds, and a busy engine keeps serving
 * while a retain batch embeds. Errors from loading the model come back with their original message.
 */
export async function createThreadedLocalEmbedder(options: LocalEmbedderOptions): Promise<Embedder> {
  const { log, ...data } = options;
  const worker = startModuleThread(import.meta.url, 'local-thread', data);
  // The thread keeps the process alive only while it has work: an embedder nobody closed (a failed start, a command
  // that returns early) must not stop the process from exiting.
  const requests = new ThreadRequests<Float32Array[]>(worker);
  let dimension = 0;
  const ready = new Promise<{ id: string; dimension: number }>((resolve, reject) => {
    worker.on('message', (message: ThreadReply) => {
      switch (message.type) {
        case 'ready':
          dimension = message.dimension;
          resolve(message);
          return;
        case 'log':
          log(message.message);
          return;
        case 'vectors': {
          const out: Float32Array[] = [];
          for (let i = 0; i < message.data.length; i += dimension) out.push(message.data.subarray(i, i + dimension));
          requests.resolve(message.seq, out);
          return;
        }
        case 'failed': {
          const error = new Error(message.message);
          if (message.seq === -1) { reject(error); return; }
          requests.reject(message.seq, error);
          return;
        }
      }
    });
    worker.on('error', (error) => {
      reject(error);
      requests.failAll(error);
    });
    worker.on('exit', (code) => {
      const error = new Error(`the embedding thread stopped (exit code ${code})`);
      reject(error);
      requests.failAll(error);
    });
  });
  let identity: { id: string; dimension: number };
  try {
    identity = await ready;
    worker.unref();
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  return {
    id: identity.id,
    dimension: identity.dimension,
    embed(texts: readonly string[], kind: 'query' | 'document'): Promise<Float32Array[]> {
      if (texts.length === 0) return Promise.resolve([]);
      return requests.send((seq) => ({ type: 'embed', seq, texts: [...texts], kind }) satisfies ThreadRequest);
    },
    async close(): Promise<void> {
      if (requests.failed) return;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.ref();
      worker.postMessage({ type: 'close' } satisfies ThreadRequest);
      await exited;
    },
  };
}
