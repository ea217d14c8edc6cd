import { join } from 'node:path';
import type { EngineConfig } from '../config/load.js';
import { DEFAULT_DATABASE_SETTINGS } from '../config/schema.js';
import { ensureWritableHome, homeParts } from '../home.js';
import type { Database } from './database.js';
import { migrate } from './migrate.js';
import { openEmbeddedDatabase } from './pglite.js';
import { openExternalDatabase, type ExternalDatabaseOptions } from './postgres.js';

/**
 * Opens the configured database (embedded under MNEMOS_HOME, or external) and applies pending migrations; closes it
 * again if migrating fails. Used by the engine and by the maintenance commands. `onAvailability` hears when an
 * external database stops answering and when it is back.
 */
export async function openDatabase(
  config: Pick<EngineConfig, 'home' | 'databaseUrl'> & Partial<Pick<EngineConfig, 'database'>>,
  onAvailability?: ExternalDatabaseOptions['onAvailability'],
): Promise<{ db: Database; applied: number[] }> {
  let db: Database;
  if (config.databaseUrl === undefined) {
    ensureWritableHome(config.home, homeParts({ databaseUrl: config.databaseUrl }));
    db = await openEmbeddedDatabase(join(config.home, 'db'));
  } else {
    db = await openExternalDatabase(config.databaseUrl, {
      ...(config.database ?? DEFAULT_DATABASE_SETTINGS),
      onAvailability,
    });
  }
  try {
    return { db, applied: await migrate(db) };
  } catch (error) {
    await db.close();
    throw error;
  }
}
