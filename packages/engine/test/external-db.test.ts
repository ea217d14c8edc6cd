import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { call, tempHome, testEnv } from './helpers/engine.js';
import { memoryPglite } from './helpers/memory-pglite.js';
import { serveOverTheWire, type WirePostgres } from './helpers/wire-postgres.js';
import { spawnEngine, type EngineProcess } from './helpers/process.js';

/**
 * The external-database path: node-postgres against Postgres reached over the wire (PGlite served with
 * pglite-socket), with two engine processes starting at once against one database.
 */

let pg: PGlite;
let server: WirePostgres;
let a: EngineProcess;
let b: EngineProcess;
const homes = [tempHome(), tempHome()];

before(async () => {
  pg = await memoryPglite({ extensions: { vector } });
  server = await serveOverTheWire(pg, 40);
  const url = server.url;
  // Both engines migrate the same empty database at the same moment.
  const engines = await Promise.all(homes.map((h) => spawnEngine(testEnv(h.path, { MNEMOS_API_DATABASE_URL: url }))));
  a = engines[0]!;
  b = engines[1]!;
});

after(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await server?.stop();
  await pg?.close();
  homes.forEach((h) => h.remove());
});

describe('external database over the wire, two engines', () => {
  it('applied each migration exactly once', async () => {
    const rows = await pg.query<{ version: number; n: number }>(
      'SELECT version, count(*)::int AS n FROM schema_migrations GROUP BY version',
    );
    assert.ok(rows.rows.length >= 1);
    assert.ok(rows.rows.every((r) => r.n === 1));
    const meta = await pg.query<{ value: { dimension: number } }>(
      "SELECT value FROM mnemos_meta WHERE key = 'embedding'",
    );
    assert.equal(meta.rows[0]?.value.dimension, 384);
  });

  it('what one engine retains the other recalls, and a delete on one is seen by both', async () => {
    const r = await call<{ memory_ids: string[] }>(a.url, 'POST', '/v1/default/banks/shared/memories', {
      items: [
        { content: 'Frank keeps bees on his roof in Lyon.' },
        { content: 'Frank sells the honey at the Sunday market.' },
      ],
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const found = await call<{ results: Array<{ id: string }> }>(
      b.url,
      'POST',
      '/v1/default/banks/shared/memories/recall',
      { query: 'Where does Frank keep bees?' },
    );
    assert.equal(found.body.results[0]?.id, r.body.memory_ids[0]);
    const del = await call(b.url, 'DELETE', `/v1/default/banks/shared/memories/${r.body.memory_ids[0]}`);
    assert.equal(del.status, 200);
    const again = await call<{ results: Array<{ id: string }> }>(
      a.url,
      'POST',
      '/v1/default/banks/shared/memories/recall',
      { query: 'Where does Frank keep bees?' },
    );
    assert.ok(!again.body.results.some((h) => h.id === r.body.memory_ids[0]));
  });

  it('identical retains through both engines store the content once', async () => {
    // pglite-socket multiplexes every connection onto PGlite's single backend, where interleaved extended-protocol
    // messages from different connections can trample each other's unnamed statements; so the calls here are
    // sequential. Concurrent identical retains are covered on the embedded path (engine-api and bad-input suites)
    // and rely on the unique index plus ON CONFLICT, which is the same SQL on any Postgres.
    const body = { content: 'Grace runs the lighthouse museum.' };
    const answers = [];
    for (const url of [a.url, b.url, a.url])
      answers.push(await call<{ memory_ids: string[] }>(url, 'POST', '/v1/default/banks/race/memories', body));
    assert.ok(
      answers.every((x) => x.status === 200),
      JSON.stringify(answers.map((x) => x.body)),
    );
    assert.equal(new Set(answers.map((x) => x.body.memory_ids[0])).size, 1);
    const count = await pg.query<{ n: number }>("SELECT count(*)::int AS n FROM memories WHERE bank_id = 'race'");
    assert.equal(count.rows[0]?.n, 1);
  });

  it('lists banks and serves health from either engine', async () => {
    const list = await call<{ banks: Array<{ bank_id: string }> }>(b.url, 'GET', '/v1/default/banks');
    assert.deepEqual(new Set(list.body.banks.map((x) => x.bank_id)), new Set(['shared', 'race']));
    const health = await call<{ status: string }>(a.url, 'GET', '/health');
    assert.equal(health.body.status, 'healthy');
    const version = await call<{ features: { database: string } }>(a.url, 'GET', '/version');
    assert.equal(version.body.features.database, 'external');
  });
});
