// Run as a script by pristine-database.ts: `migrate-home.ts <home>` opens the embedded database under <home> the way
// the engine does at start (pgvector, then every migration) and closes it again.
import { openDatabase } from '../../src/db/open.js';

const home = process.argv[2];
if (home === undefined) throw new Error('usage: migrate-home.ts <home>');
const { db } = await openDatabase({ home, databaseUrl: undefined });
await db.close();
