import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { initdbCommand } from '../../src/db/pglite.js';

/**
 * A new embedded database folder costs a PGlite initdb in a child process, then the migrations: several seconds of
 * CPU, the largest part of an engine's first start, paid again by every test that starts an engine in a fresh home.
 * Both folders depend only on the PGlite version and the migrations' sources, so each is made once per version (by the
 * engine's own initdb command and its own openDatabase) and copied into each new home:
 * - 'migrated' (the default): initdb, pgvector and every migration applied, as an engine leaves its database after its
 *   first start. The engine opens it as it opens any database it has started on before; everything after the
 *   migrations (the embedding model's check, settings, the indexes' load) still runs in every test.
 * - 'initdb': a never-migrated folder, for tests of the migrations or of what the engine does to initdb's files.
 * Tests of a first start with no folder at all make no copy (tempHome's `database: 'none'`).
 */
export type SeedStage = 'initdb' | 'migrated';

export function seedEmbeddedDatabase(home: string, stage: SeedStage = 'migrated'): void {
  cpSync(stage === 'initdb' ? initdbFolder() : migratedFolder(), join(home, 'db'), { recursive: true });
}

const made = new Map<SeedStage, string>();

export function pgliteVersion(): string {
  const manifest = new URL('../package.json', import.meta.resolve('@electric-sql/pglite'));
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

function initdbFolder(): string {
  return cachedFolder('initdb', `mnemos-test-pristine-db-${pgliteVersion()}`, (db) => {
    const [file, args] = initdbCommand(db);
    execFileSync(file, args, { stdio: 'ignore' });
  });
}

const DB_SOURCES = fileURLToPath(new URL('../../src/db/', import.meta.url));

/** The files whose change changes what the migrations leave: the migrations themselves and the code applying them. */
function migrationsDigest(): string {
  const hash = createHash('sha256').update(pgliteVersion());
  const migrations = join(DB_SOURCES, 'migrations');
  const files = [
    ...readdirSync(migrations)
      .sort()
      .map((name) => join(migrations, name)),
    ...['migrate.ts', 'open.ts', 'pglite.ts', 'pglite-thread.ts'].map((name) => join(DB_SOURCES, name)),
  ];
  for (const file of files) hash.update(file).update(readFileSync(file));
  return hash.digest('hex').slice(0, 16);
}

const MIGRATE_SCRIPT = fileURLToPath(new URL('./migrate-home.ts', import.meta.url));

function migratedFolder(): string {
  return cachedFolder('migrated', `mnemos-test-migrated-db-${migrationsDigest()}`, (db) => {
    const home = join(db, '..');
    seedEmbeddedDatabase(home, 'initdb');
    execFileSync(process.execPath, ['--conditions=source', '--import', 'tsx', MIGRATE_SCRIPT, home], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  });
}

/**
 * The folder `name` under the temporary folder, built by `build` (into a scratch `<scratch>/db`) the first time any test
 * file asks for it on this machine.
 */
function cachedFolder(stage: SeedStage, name: string, build: (db: string) => void): string {
  const known = made.get(stage);
  if (known !== undefined) return known;
  const folder = join(tmpdir(), name);
  if (!existsSync(join(folder, 'PG_VERSION'))) {
    // Several test files start at once: each builds its own copy and the first rename wins, so no file ever sees a
    // half-written folder.
    const scratch = mkdtempSync(`${folder}.building-`);
    build(join(scratch, 'db'));
    try {
      renameSync(join(scratch, 'db'), folder);
    } catch (error) {
      if (!existsSync(join(folder, 'PG_VERSION'))) throw error;
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  made.set(stage, folder);
  return folder;
}
