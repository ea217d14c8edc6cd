import type { Database } from './database.js';

export class EmbeddingModelMismatchError extends Error {
  override readonly name = 'EmbeddingModelMismatchError';
}

/**
 * Records the embedding model and dimension on first start and adds the vector column sized for it. A later start
 * with another model is refused: vectors of two models are not comparable.
 */
export async function ensureEmbeddingSchema(db: Database, model: string, dimension: number): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [0x6d6e656e]);
    const rows = await tx.query<{ value: { model: string; dimension: number } }>(
      "SELECT value FROM mnemos_meta WHERE key = 'embedding'",
    );
    const recorded = rows[0]?.value;
    if (recorded === undefined) {
      await tx.query("INSERT INTO mnemos_meta (key, value) VALUES ('embedding', $1::jsonb)", [
        JSON.stringify({ model, dimension }),
      ]);
      await tx.query(`ALTER TABLE memories ADD COLUMN IF NOT EXISTS embedding vector(${Math.trunc(dimension)})`);
      return;
    }
    if (recorded.model !== model || recorded.dimension !== dimension) {
      throw new EmbeddingModelMismatchError(
        `This database was built with the embedding model ${recorded.model} (${recorded.dimension} dimensions) but the engine is configured with ${model} (${dimension} dimensions). ` +
          'Start with the original model (MNEMOS_API_EMBEDDINGS_*), or migrate the vectors with `mnemos reembed`, or point MNEMOS_HOME / MNEMOS_API_DATABASE_URL at a new database.',
      );
    }
  });
}
