import { isAbsolute, join } from 'node:path';
import type { EmbeddingsConfig } from '../config/load.js';
import { acquireModel, type StartupProgress } from './acquire.js';
import type { Embedder } from './embedder.js';
import { cohereCall, createHostedEmbedder, geminiCall, openAiCompatibleCall } from './hosted.js';
import { createThreadedLocalEmbedder } from './threaded.js';

export type { Embedder } from './embedder.js';
export { BATCH_TOKENS, MicroBatcher } from './batcher.js';
export { paddedTokens } from './length-groups.js';
export type { StartupProgress } from './acquire.js';

/**
 * Builds the configured embedding family (exactly one is configured; see config/load.ts). A local hub model is
 * downloaded into MNEMOS_HOME/models first when missing, reporting `onProgress('downloading model', 0..1)`.
 */
export async function createEmbedder(
  config: EmbeddingsConfig,
  home: string,
  log: (m: string) => void,
  onProgress?: StartupProgress,
): Promise<Embedder> {
  switch (config.family) {
    case 'local': {
      const cacheDir = join(home, 'models');
      if (!isAbsolute(config.model)) {
        await acquireModel({
          model: config.model,
          modelsDir: cacheDir,
          hubUrl: config.hubUrl,
          dtype: config.dtype,
          log,
          onProgress,
        });
      }
      return createThreadedLocalEmbedder({ model: config.model, cacheDir, dtype: config.dtype, log });
    }
    case 'litellm':
      return createHostedEmbedder(`litellm:${config.model}`, openAiCompatibleCall(config));
    case 'gemini':
      return createHostedEmbedder(`gemini:${config.model}`, geminiCall(config));
    case 'cohere':
      return createHostedEmbedder(`cohere:${config.model}`, cohereCall(config));
  }
}
