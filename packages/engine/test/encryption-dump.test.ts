// test-runner: long (started first, so the suite does not wait for it at the end)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import type { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import pg from 'pg';
import { startEngine, type RunningEngine } from '../src/index.js';
import { call, tempHome, testEnv } from './helpers/engine.js';
import { memoryPglite } from './helpers/memory-pglite.js';
import { serveOverTheWire, type WirePostgres } from './helpers/wire-postgres.js';

/**
 * The external-database path with encryption: the engine writes through node-postgres to a server (PGlite served over
 * the wire), then a dump of every table, and the server's data folder, hold no marker. pg_dump is tried first; when it
 * refuses the server (PGlite is a newer Postgres than the installed pg_dump 15), every table is dumped with
 * `SELECT t::text` (COPY's text form, row by row) through node-postgres instead.
 */

const KEY = Buffer.alloc(32, 5).toString('base64');
const MARKERS = ['Plumbrastiquel', 'Voxendarrowmere'];

let db: PGlite;
let server: WirePostgres;
let url: string;
let engine: RunningEngine | undefined;
const home = tempHome();

before(async () => {
  db = await memoryPglite({ extensions: { vector } });
  server = await serveOverTheWire(db);
  url = server.url;
  engine = await startEngine({
    env: testEnv(home.path, { MNEMOS_API_DATABASE_URL: url, MNEMOS_API_ENCRYPTION_MASTER_KEY: KEY }),
  });
});

after(async () => {
  await engine?.close().catch(() => undefined);
  await server?.stop();
  await db?.close();
  home.remove();
});

async function dump(): Promise<string> {
  const pgDump = spawnSync('pg_dump', ['--data-only', '--no-owner', url], { encoding: 'utf8', timeout: 30_000 });
  if (pgDump.status === 0 && pgDump.stdout.includes('COPY')) return pgDump.stdout;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ name: string }>(
      "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'",
    );
    let out = '';
    for (const { name } of tables.rows) {
      const rows = await client.query<{ line: string }>(`SELECT t::text AS line FROM "${name}" t`);
      out += `-- ${name}\n${rows.rows.map((r) => r.line).join('\n')}\n`;
    }
    return out;
  } finally {
    await client.end();
  }
}

describe('encryption at rest on an external database', () => {
  it('a dump and the data folder hold no marker; recall still finds them', async () => {
    const running = engine!;
    const r = await call<{ memory_ids: string[] }>(running.url, 'POST', '/v1/default/banks/bob/memories', {
      items: [
        { content: `Bob's boat is called ${MARKERS[0]} and is moored in Brest.`, metadata: { tag: MARKERS[1]! } },
        { content: 'Bob repairs old radios in his spare time.', context: `told by ${MARKERS[1]}` },
      ],
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const found = await call<{ results: Array<{ text: string }> }>(
      running.url,
      'POST',
      '/v1/default/banks/bob/memories/recall',
      { query: `What is the name of ${MARKERS[0]}?` },
    );
    assert.match(found.body.results[0]?.text ?? '', new RegExp(MARKERS[0]!));
    await running.close();
    engine = undefined;

    const text = await dump();
    assert.match(text, /memories/);
    for (const m of MARKERS)
      for (const form of [m, m.toLowerCase()]) assert.ok(!text.includes(form), `${form} in the dump`);
    const files = Buffer.from(await (await db.dumpDataDir('none')).arrayBuffer());
    for (const m of MARKERS)
      for (const form of [m, m.toLowerCase()])
        assert.ok(!files.includes(Buffer.from(form)), `${form} in the data folder`);
  });
});
