import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { env, pipeline, type FeatureExtractionPipeline } from '@huggingface/transformers';
import type { Embedder } from './embedder.js';

export interface LocalEmbedderOptions {
  /** A Hugging Face model id (its files already in `cacheDir/<id>/`, see acquire.ts) or an absolute path to a model folder. */
  model: string;
  cacheDir: string;
  dtype: 'fp32' | 'q8';
  log: (message: string) => void;
  /**
   * Let ONNX Runtime's intra-op threads spin between operators (its default). Off by default here: on a small machine
   * spinning threads take the cores the event loop needs to store the previous batch and answer requests meanwhile.
   */
  spinning?: boolean;
}

/** ONNX sentence embeddings (mean pooling, L2-normalised) through transformers.js and onnxruntime-node. */
export async function createLocalEmbedder(options: LocalEmbedderOptions): Promise<Embedder> {
  const isFolder = options.model.startsWith('/');
  if (isFolder) {
    if (!existsSync(join(options.model, 'config.json'))) {
      throw new Error(
        `MNEMOS_API_EMBEDDINGS_LOCAL_MODEL points at ${options.model}, which has no config.json; point it at a model folder in the transformers.js layout (config.json, tokenizer.json, onnx/model.onnx).`,
      );
    }
    env.localModelPath = dirname(options.model) + '/';
    env.allowLocalModels = true;
    env.allowRemoteModels = false;
  } else {
    // A hub id loads from MNEMOS_HOME/models, where acquire.ts has put (downloaded and verified) its files; the
    // library's own cache stays there too, never inside node_modules (read-only to the container's user).
    env.localModelPath = options.cacheDir.endsWith('/') ? options.cacheDir : `${options.cacheDir}/`;
    env.cacheDir = options.cacheDir;
    env.allowLocalModels = true;
    env.allowRemoteModels = false;
  }
  const name = isFolder ? basename(options.model) : options.model;
  const extractor = await pipeline('feature-extraction', name, {
    dtype: options.dtype,
    device: 'cpu',
    session_options: { extra: { session: { intra_op: { allow_spinning: options.spinning === true ? '1' : '0' } } } },
  });
  const probe = await extractor(['warm up'], { pooling: 'mean', normalize: true });
  const dimension = probe.dims[1] ?? 0;
  return new LocalEmbedder(extractor, `local:${isFolder ? basename(options.model) : options.model}`, dimension);
}

class LocalEmbedder implements Embedder {
  constructor(
    private readonly extractor: FeatureExtractionPipeline,
    readonly id: string,
    readonly dimension: number,
  ) {}

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const output = await this.extractor([...texts], { pooling: 'mean', normalize: true });
    const data = output.data as Float32Array;
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i++) {
      out.push(data.slice(i * this.dimension, (i + 1) * this.dimension));
    }
    return out;
  }

  async close(): Promise<void> {
    await this.extractor.dispose();
  }
}
