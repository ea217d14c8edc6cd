/** Turns texts into unit-length vectors. Implementations: local ONNX, OpenAI-compatible/LiteLLM, Gemini, Cohere. */
export interface Embedder {
  /** Stable identity recorded in the database (family and model), e.g. `local:Xenova/all-MiniLM-L6-v2`. */
  readonly id: string;
  readonly dimension: number;
  /** `kind` lets providers that distinguish queries from documents (Gemini, Cohere) embed each correctly. */
  embed(texts: readonly string[], kind: 'query' | 'document'): Promise<Float32Array[]>;
  close(): Promise<void>;
}

export function normalize(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!;
  const norm = Math.sqrt(sum) || 1;
  for (let i = 0; i < v.length; i++) v[i] = v[i]! / norm;
  return v;
}

export class EmbeddingProviderError extends Error {
  override readonly name = 'EmbeddingProviderError';
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}
