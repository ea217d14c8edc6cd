import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initdbCommand } from '../../src/db/pglite.js';

/**
 * A new embedded database folder costs a PGlite initdb in a child process: several seconds of CPU, the largest part of
 * an engine's first start, paid again by every test that starts an engine in a fresh home. The folder initdb writes
 * depends only on the PGlite version, so it is made once per version (by the engine's own initdb command) and copied into
 * each new home. The engine then opens it as it opens any existing, never-migrated folder: its migrations, its settings
 * and everything after initdb still run in every test. Tests of a first start with no folder at all opt out.
 */
export function seedEmbeddedDatabase(home: string): void {
  cpSync(pristineFolder(), join(home, 'db'), { recursive: true });
}

let made: string | undefined;

function pristineFolder(): string {
  if (made !== undefined) return made;
  const manifest = new URL('../package.json', import.meta.resolve('@electric-sql/pglite'));
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  const folder = join(tmpdir(), `mnemos-test-pristine-db-${version}`);
  if (!existsSync(join(folder, 'PG_VERSION'))) {
    // Several test files start at once: each builds its own copy and the first rename wins, so no file ever sees a
    // half-written folder.
    const scratch = mkdtempSync(`${folder}.building-`);
    const [file, args] = initdbCommand(join(scratch, 'db'));
    execFileSync(file, args, { stdio: 'ignore' });
    try {
      renameSync(join(scratch, 'db'), folder);
    } catch (error) {
      if (!existsSync(join(folder, 'PG_VERSION'))) throw error;
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  made = folder;
  return folder;
}
