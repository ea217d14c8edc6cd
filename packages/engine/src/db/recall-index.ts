import type { Database } from './database.js';
import { RECALL_INDEX, recallIndexSql } from './migrations/007_recall_index.js';

/** Arbitrary constant naming the recall index build among the server's advisory locks. */
const RECALL_INDEX_LOCK = 0x6d6e656f;

/** What ensureRecallIndex found or did. */
export type RecallIndexOutcome = 'present' | 'built' | 'building elsewhere';

/**
 * Builds the Postgres tier's HNSW index (migration 007) unless it is there and valid. On a server it is built
 * concurrently (writes go on meanwhile) on a connection of its own; one engine builds it while the others skip (an
 * advisory lock), and an invalid index left by an interrupted build is dropped and built again. The embedded database
 * is one connection that runs one statement at a time, so no build there can let writes through: it is built at start,
 * before the engine serves (instantly on a new database; once, on an existing one).
 */
export async function ensureRecallIndex(db: Database): Promise<RecallIndexOutcome> {
  const concurrently = db.kind === 'external';
  return db.session(async (session) => {
    const [locked] = await session.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [RECALL_INDEX_LOCK]);
    if (!locked?.ok) return 'building elsewhere';
    try {
      const [index] = await session.query<{ valid: boolean }>(
        `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
         WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace`,
        [RECALL_INDEX],
      );
      if (index?.valid) return 'present';
      if (index) await session.query(`DROP INDEX ${concurrently ? 'CONCURRENTLY ' : ''}IF EXISTS ${RECALL_INDEX}`);
      await session.query(recallIndexSql(concurrently));
      return 'built';
    } finally {
      await session.query('SELECT pg_advisory_unlock($1)', [RECALL_INDEX_LOCK]);
    }
  });
}
