import type { Database, Queryable } from './database.js';

export class EmbeddingModelMismatchError extends Error {
  override readonly name = 'EmbeddingModelMismatchError';
}

/** Arbitrary constant naming the embedding-schema lock among the server's advisory locks. */
export const EMBEDDING_LOCK = 0x6d6e656e;

/** The embedding model recorded in mnemos_meta: `embedding` (in use) or `embedding_next` (a `mnemos reembed` target). */
export interface EmbeddingRecord {
  model: string;
  dimension: number;
}

export async function readEmbeddingRecord(
  q: Queryable,
  key: 'embedding' | 'embedding_next',
): Promise<EmbeddingRecord | undefined> {
  const rows = await q.query<{ value: EmbeddingRecord }>('SELECT value FROM mnemos_meta WHERE key = $1', [key]);
  return rows[0]?.value;
}

/**
 * Records the embedding model and dimension on first start and adds the vector column sized for it. A later start
 * with another model is refused: vectors of two models are not comparable (`mnemos reembed` migrates them).
 */
export async function ensureEmbeddingSchema(db: Database, model: string, dimension: number): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [EMBEDDING_LOCK]);
    const recorded = await readEmbeddingRecord(tx, 'embedding');
    if (recorded === undefined) {
      await tx.query("INSERT INTO mnemos_meta (key, value) VALUES ('embedding', $1::jsonb)", [
        JSON.stringify({ model, dimension }),
      ]);
      await tx.query(`ALTER TABLE memories ADD COLUMN IF NOT EXISTS embedding vector(${Math.trunc(dimension)})`);
      return;
    }
    if (recorded.model !== model || recorded.dimension !== dimension) {
      const pending = await readEmbeddingRecord(tx, 'embedding_next');
      const unfinished =
        pending?.model === model && pending.dimension === dimension
          ? ' A `mnemos reembed` to this model was started and not finished: run it again (with these settings) to finish it.'
          : '';
      throw new EmbeddingModelMismatchError(
        `This database was built with the embedding model ${recorded.model} (${recorded.dimension} dimensions) but the engine is configured with ${model} (${dimension} dimensions).${unfinished} ` +
          'Start with the original model (MNEMOS_API_EMBEDDINGS_*), or migrate the vectors with `mnemos reembed` (run with the new model settings), or point MNEMOS_HOME / MNEMOS_API_DATABASE_URL at a new database.',
      );
    }
  });
}
