import type { Database } from './database.js';
import { migrations } from './migrations/index.js';
import { errorMessage } from '../util/error-message.js';

/** Arbitrary constant naming Mnemos's migration lock among the server's advisory locks. */
const MIGRATION_LOCK = 0x6d6e656d;

export class PgvectorMissingError extends Error {
  override readonly name = 'PgvectorMissingError';
}

/**
 * Makes sure pgvector exists, then applies pending migrations in one transaction under an advisory lock, so two
 * engines starting against one database at the same moment apply each migration exactly once. `list` is every
 * migration unless a test builds a database as an earlier release left it.
 */
export async function migrate(db: Database, list: typeof migrations = migrations): Promise<number[]> {
  await ensurePgvector(db);
  return db.transaction(async (tx) => {
    // Building tables and indexes may take longer than MNEMOS_API_DATABASE_STATEMENT_TIMEOUT_MS allows a request.
    await tx.query('SET LOCAL statement_timeout = 0');
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set(
      (await tx.query<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version),
    );
    const applied: number[] = [];
    for (const m of list) {
      if (done.has(m.version)) continue;
      await tx.exec(m.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.version);
    }
    return applied;
  });
}

async function ensurePgvector(db: Database): Promise<void> {
  const available = await db.query<{ name: string }>("SELECT name FROM pg_available_extensions WHERE name = 'vector'");
  if (available.length === 0) {
    throw new PgvectorMissingError(
      'The database has no pgvector extension. Install it on the Postgres server (Debian/Ubuntu: apt-get install postgresql-15-pgvector; ' +
        'or use the pgvector/pgvector Docker image), or unset MNEMOS_API_DATABASE_URL to use the embedded database.',
    );
  }
  try {
    await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await tx.query('CREATE EXTENSION IF NOT EXISTS vector');
    });
  } catch (error) {
    throw new PgvectorMissingError(
      `pgvector is installed on the server but could not be enabled (${errorMessage(error)}). ` +
        'Run CREATE EXTENSION vector; as a superuser in this database once, then start Mnemos again.',
    );
  }
}
