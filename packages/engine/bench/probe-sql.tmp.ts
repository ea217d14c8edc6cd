import { loadEngineConfig } from '../src/config/load.js';
import { Engine } from '../src/engine.js';
import { benchModelDir } from './local-model.js';
const quiet = { info: () => undefined, warn: () => undefined, error: (m: string) => console.error(m) };
const engine = await Engine.open(loadEngineConfig({ MNEMOS_HOME: '/work/scale-home', MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: benchModelDir() }), quiet);
const db = engine.db;
const ids = (await db.query<{ id: string }>(`SELECT id::text AS id FROM memories WHERE tenant='default' AND bank_id='scale-0' ORDER BY random() LIMIT 400`)).map((r) => r.id);
for (const sql of [
  `SELECT m.id::text AS id, encode(substring(vector_send(m.embedding) FROM 5), 'base64') AS embedding FROM memories m WHERE m.tenant = $1 AND m.bank_id = $2 AND m.embedding IS NOT NULL AND m.id = ANY($3::uuid[])`,
  `SELECT m.id::text AS id, encode(substring(halfvec_send(m.embedding::halfvec) FROM 5), 'base64') AS embedding FROM memories m WHERE m.tenant = $1 AND m.bank_id = $2 AND m.embedding IS NOT NULL AND m.id = ANY($3::uuid[])`,
  `SELECT m.id::text AS id, substring(vector_send(m.embedding) FROM 5) AS embedding FROM memories m WHERE m.tenant = $1 AND m.bank_id = $2 AND m.embedding IS NOT NULL AND m.id = ANY($3::uuid[])`,
  `SELECT m.id::text AS id, length(m.embedding::text) AS embedding FROM memories m WHERE m.tenant = $1 AND m.bank_id = $2 AND m.embedding IS NOT NULL AND m.id = ANY($3::uuid[])`,
  `SELECT m.id::text AS id FROM memories m WHERE m.tenant = $1 AND m.bank_id = $2 AND m.embedding IS NOT NULL AND m.id = ANY($3::uuid[])`,
]) {
  const times: number[] = [];
  for (let i = 0; i < 10; i++) {
    const t = performance.now();
    await db.query(sql, ['default', 'scale-0', ids]);
    times.push(performance.now() - t);
  }
  const plan = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, ['default', 'scale-0', ids]);
  console.log(times.sort((a, b) => a - b)[5]!.toFixed(1), 'ms;', plan.map((r) => r['QUERY PLAN']).filter((l) => /Execution|Buffers/.test(l)).join(' ').replace(/\s+/g, ' '));
}
const st = await db.query(`SELECT attname, attstorage FROM pg_attribute WHERE attrelid = 'memories'::regclass AND attname IN ('embedding','text','fts')`);
console.log(JSON.stringify(st));
const toast = await db.query(`SELECT avg(pg_column_size(embedding))::int AS vec, avg(pg_column_size(fts))::int AS fts, avg(pg_column_size(m.*))::int AS row FROM (SELECT * FROM memories LIMIT 2000) m`);
console.log(JSON.stringify(toast));
await engine.close();
