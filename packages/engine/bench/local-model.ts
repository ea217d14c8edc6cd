import { engineEnvSchema } from '../src/config/schema.js';
import { testModelDir } from './test-assets.js';

/** The model folder for benchmarks that honour MNEMOS_API_EMBEDDINGS_LOCAL_MODEL, as the engine does. */
export const benchModelDir = (): string => process.env.MNEMOS_API_EMBEDDINGS_LOCAL_MODEL ?? testModelDir();

/**
 * The precision the engine will run (MNEMOS_API_EMBEDDINGS_LOCAL_DTYPE), read through the engine's own setting schema,
 * so a benchmark that loads the model itself loads the engine's, and a bad value fails with the engine's message.
 */
export function benchModelDtype(): 'fp32' | 'q8' {
  const parsed = engineEnvSchema.shape.MNEMOS_API_EMBEDDINGS_LOCAL_DTYPE.safeParse(
    process.env.MNEMOS_API_EMBEDDINGS_LOCAL_DTYPE,
  );
  if (!parsed.success) {
    throw new Error(
      `MNEMOS_API_EMBEDDINGS_LOCAL_DTYPE=${process.env.MNEMOS_API_EMBEDDINGS_LOCAL_DTYPE}: must be fp32 or q8 (or unset for fp32)`,
    );
  }
  return parsed.data;
}
