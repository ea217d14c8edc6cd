import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { pgliteVersion } from './pristine-database.js';

/**
 * An in-memory PGlite (a Postgres server the tests reach over the wire, or one to compare with), as
 * `PGlite.create(options)` makes it, but loaded from a dump of a new cluster: with no data, PGlite runs initdb in the
 * test's own process, 2-4 s of CPU each time, where loading the dump takes under one. The dump holds only what initdb
 * wrote (extensions load at create, as before), and is made once per PGlite version on this machine.
 */
export async function memoryPglite(options: Omit<PGliteOptions, 'dataDir' | 'loadDataDir'> = {}): Promise<PGlite> {
  return PGlite.create({ ...options, loadDataDir: new Blob([readFileSync(await newClusterDump())]) });
}

let dumped: string | undefined;

async function newClusterDump(): Promise<string> {
  if (dumped !== undefined) return dumped;
  const file = join(tmpdir(), `mnemos-test-pglite-cluster-${pgliteVersion()}.tar`);
  if (!existsSync(file)) {
    const pg = await PGlite.create();
    try {
      const dump = await pg.dumpDataDir('none');
      // Several test files start at once: each writes its own copy and renames it into place, so none reads half.
      const scratch = `${file}.${process.pid}`;
      writeFileSync(scratch, Buffer.from(await dump.arrayBuffer()));
      renameSync(scratch, file);
    } finally {
      await pg.close();
    }
  }
  dumped = file;
  return file;
}
