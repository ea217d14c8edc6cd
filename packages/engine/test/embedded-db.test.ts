import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { EMBEDDED_SETTINGS, openEmbeddedDatabase } from '../src/db/pglite.js';

/** The embedded database: created on first open (initdb in a child process), reopened as is, with its memory settings. */
describe('embedded database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mnemos-embedded-db-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('creates a new data folder, keeps what was written, and runs with the memory settings', async () => {
    const dataDir = join(dir, 'db');
    const first = await openEmbeddedDatabase(dataDir);
    try {
      assert.ok(existsSync(join(dataDir, 'PG_VERSION')), 'the data folder is a Postgres cluster');
      await first.exec('CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)');
    } finally {
      await first.close();
    }
    const again = await openEmbeddedDatabase(dataDir);
    try {
      assert.deepEqual(await again.query('SELECT n FROM kept'), [{ n: 42 }]);
      for (const [name, value] of Object.entries(EMBEDDED_SETTINGS)) {
        const [row] = await again.query<Record<string, string>>(`SHOW ${name}`);
        assert.equal(row?.[name], value, name);
      }
      // pgvector still loads (the child created the cluster without extensions).
      await again.exec('CREATE EXTENSION IF NOT EXISTS vector');
      assert.deepEqual(await again.query(`SELECT '[1,2]'::vector(2)::text AS v`), [{ v: '[1,2]' }]);
    } finally {
      await again.close();
    }
  });
});
