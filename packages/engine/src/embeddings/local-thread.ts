import { serveThread, threadData, transferred } from '../util/thread.js';
import { createLocalEmbedder, type LocalEmbedderOptions } from './local.js';

/**
 * The worker-thread side of the threaded local embedder (threaded.ts): loads the model here and embeds one batch at a
 * time, answering with one flat Float32Array per batch (transferred, not copied). Log lines go out as events.
 */
async function open(emit: (logLine: string) => void) {
  const embedder = await createLocalEmbedder({ ...(threadData() as Omit<LocalEmbedderOptions, 'log'>), log: emit });
  return {
    identity: () => ({ id: embedder.id, dimension: embedder.dimension }),
    async embed(texts: string[], kind: 'query' | 'document') {
      const vectors = await embedder.embed(texts, kind);
      const data = new Float32Array(vectors.length * embedder.dimension);
      vectors.forEach((v, i) => data.set(v, i * embedder.dimension));
      return transferred(data, [data.buffer]);
    },
    close: () => embedder.close(),
  };
}

export type EmbeddingThread = Awaited<ReturnType<typeof open>>;

serveThread(open);
