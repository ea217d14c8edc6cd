import { join } from 'node:path';
import type { EmbeddingsConfig } from '../config/load.js';
import type { Embedder } from './embedder.js';
import { cohereCall, createHostedEmbedder, geminiCall, openAiCompatibleCall } from './hosted.js';
import { createThreadedLocalEmbedder } from './threaded.js';

export type { Embedder } from './embedder.js';
export { MicroBatcher } from './batcher.js';

/** Builds the configured embedding family (exactly one is configured; see config/load.ts). */
export async function createEmbedder(config: EmbeddingsConfig, home: string, log: (m: string) => void): Promise<Embedder> {
  switch (config.family) {
    case 'local':
      return createThreadedLocalEmbedder({ model: config.model, cacheDir: join(home, 'models'), dtype: config.dtype, log });
    case 'litellm':
      return createHostedEmbedder(`litellm:${config.model}`, openAiCompatibleCall(config));
    case 'gemini':
      return createHostedEmbedder(`gemini:${config.model}`, geminiCall(config));
    case 'cohere':
      return createHostedEmbedder(`cohere:${config.model}`, cohereCall(config));
  }
}
