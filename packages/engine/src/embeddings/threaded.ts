import { SMALL_YOUNG_GENERATION, ThreadClient } from '../util/thread.js';
import type { Embedder } from './embedder.js';
import type { EmbeddingThread } from './local-thread.js';
import type { LocalEmbedderOptions } from './local.js';

/**
 * The local ONNX model in a worker thread. onnxruntime-node runs inference synchronously on the calling thread, so on
 * the main thread every embedding blocked the event loop: HTTP, the database and recall's other arms waited for it.
 * In a worker, a recall's keyword arm and index sync run while its query embeds, and a busy engine keeps serving
 * while a retain batch embeds. Errors from loading the model come back with their original message.
 */
export async function createThreadedLocalEmbedder(options: LocalEmbedderOptions): Promise<Embedder> {
  const { log, ...data } = options;
  // The thread keeps the process alive only while it has work: an embedder nobody closed (a failed start, a command
  // that returns early) must not stop the process from exiting.
  const thread = await ThreadClient.start<EmbeddingThread, string>(import.meta.url, 'local-thread', {
    data,
    onEvent: log,
    stopped: (code) => new Error(`the embedding thread stopped (exit code ${code})`),
    resourceLimits: SMALL_YOUNG_GENERATION,
  });
  const { id, dimension } = await thread.call('identity', []);
  return {
    id,
    dimension,
    async embed(texts: readonly string[], kind: 'query' | 'document'): Promise<Float32Array[]> {
      if (texts.length === 0) return [];
      const flat = await thread.call('embed', [[...texts], kind]);
      const out: Float32Array[] = [];
      for (let i = 0; i < flat.length; i += dimension) out.push(flat.subarray(i, i + dimension));
      return out;
    },
    async close(): Promise<void> {
      if (thread.failed) return;
      await thread.call('close', []);
      await thread.terminate(new Error('the embedding thread is closed'));
    },
  };
}
