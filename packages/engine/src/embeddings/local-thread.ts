import { parentPort, workerData } from 'node:worker_threads';
import { createLocalEmbedder, type LocalEmbedderOptions } from './local.js';
import type { ThreadReply, ThreadRequest } from './threaded.js';

/**
 * The worker-thread side of the threaded local embedder (threaded.ts): loads the model here and embeds one batch at a
 * time, answering with one flat Float32Array per batch (transferred, not copied).
 */
const port = parentPort!;
const reply = (message: ThreadReply, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
const options = workerData as Omit<LocalEmbedderOptions, 'log'>;

try {
  const embedder = await createLocalEmbedder({ ...options, log: (message) => reply({ type: 'log', message }) });
  port.on('message', (request: ThreadRequest) => {
    if (request.type === 'close') {
      void embedder.close().finally(() => port.close());
      return;
    }
    embedder.embed(request.texts, request.kind).then(
      (vectors) => {
        const data = new Float32Array(vectors.length * embedder.dimension);
        vectors.forEach((v, i) => data.set(v, i * embedder.dimension));
        reply({ type: 'vectors', seq: request.seq, data }, [data.buffer]);
      },
      (error: unknown) => reply({ type: 'failed', seq: request.seq, message: error instanceof Error ? error.message : String(error) }),
    );
  });
  reply({ type: 'ready', id: embedder.id, dimension: embedder.dimension });
} catch (error) {
  reply({ type: 'failed', seq: -1, message: error instanceof Error ? error.message : String(error) });
}
