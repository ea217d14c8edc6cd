import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { toVectorLiteral } from '../src/db/database.js';
import { VectorCache } from '../src/vectors/vector-cache.js';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';

/** The in-memory vector cache answers exactly what pgvector's exact scan answers, and follows every kind of write. */

let engine: TestEngine;
const topics = ['sailing', 'baking bread', 'chess openings', 'mountain hiking', 'jazz piano', 'tax forms', 'garden roses', 'space telescopes'];

before(async () => {
  engine = await startTestEngine();
  const items = Array.from({ length: 120 }, (_, i) => ({
    content: `Memory ${i}: a note about ${topics[i % topics.length]} and detail ${i * 7}.`,
    tags: i % 3 === 0 ? ['even'] : [],
  }));
  await call(engine.url, 'POST', '/v1/default/banks/vc/memories', { items });
  await call(engine.url, 'POST', '/v1/default/banks/vc/memories', { items: items.slice(0, 20).map((x) => ({ ...x, content: `${x.content} (other space)` })), space: 'other' });
});
after(async () => {
  await engine?.dispose();
});

async function sqlTop(query: Float32Array, k: number, space = 'default'): Promise<string[]> {
  const rows = await engine.engine.db.query<{ id: string }>(
    `SELECT id FROM memories WHERE tenant = 'default' AND bank_id = 'vc' AND space = $2 AND state = 'valid'
     ORDER BY embedding <=> $1::vector, id LIMIT ${k}`,
    [toVectorLiteral(query), space],
  );
  return rows.map((r) => r.id);
}

const keepSpace = (space: string) => (m: { space: string; valid: boolean }) => m.valid && m.space === space;

describe('vector cache', () => {
  it('matches the exact scan of pgvector', async () => {
    const cache = new VectorCache(384);
    for (const q of ['boats on the sea', 'sourdough', 'a chess game', 'the night sky']) {
      const [v] = await engine.engine.embedder.embed([q], 'query');
      const fromCache = (await cache.search(engine.engine.db, 'default', ['vc'], v!, 10, keepSpace('default'))).map((h) => h.id);
      assert.deepEqual(fromCache, await sqlTop(v!, 10));
      const otherSpace = (await cache.search(engine.engine.db, 'default', ['vc'], v!, 5, keepSpace('other'))).map((h) => h.id);
      assert.deepEqual(otherSpace, await sqlTop(v!, 5, 'other'));
    }
  });

  it('follows inserts, edits, invalidations and deletes made after it loaded', async () => {
    const cache = new VectorCache(384);
    const [probe] = await engine.engine.embedder.embed(['volcano eruption lava'], 'query');
    await cache.search(engine.engine.db, 'default', ['vc'], probe!, 5, keepSpace('default'));

    const added = await call<{ memory_ids: string[] }>(engine.url, 'POST', '/v1/default/banks/vc/memories', { content: 'The volcano eruption sent lava down the hill.' });
    let top = await cache.search(engine.engine.db, 'default', ['vc'], probe!, 5, keepSpace('default'));
    assert.equal(top[0]?.id, added.body.memory_ids[0]);

    const victim = top[1]!.id;
    await call(engine.url, 'PATCH', `/v1/default/banks/vc/memories/${added.body.memory_ids[0]}`, { text: 'A quiet afternoon of knitting.' });
    top = await cache.search(engine.engine.db, 'default', ['vc'], probe!, 5, keepSpace('default'));
    assert.notEqual(top[0]?.id, added.body.memory_ids[0]);
    assert.deepEqual(top.map((h) => h.id), await sqlTop(probe!, 5));

    await call(engine.url, 'PATCH', `/v1/default/banks/vc/memories/${victim}`, { state: 'invalidated' });
    top = await cache.search(engine.engine.db, 'default', ['vc'], probe!, 5, keepSpace('default'));
    assert.ok(!top.some((h) => h.id === victim));

    const gone = top[0]!.id;
    await call(engine.url, 'DELETE', `/v1/default/banks/vc/memories/${gone}`);
    top = await cache.search(engine.engine.db, 'default', ['vc'], probe!, 5, keepSpace('default'));
    assert.ok(!top.some((h) => h.id === gone));
    assert.deepEqual(top.map((h) => h.id), await sqlTop(probe!, 5));

    await call(engine.url, 'DELETE', '/v1/default/banks/vc');
    top = await cache.search(engine.engine.db, 'default', ['vc'], probe!, 5, keepSpace('default'));
    assert.deepEqual(top, []);
  });
});

describe('SIMD matrix', () => {
  it('scores rows like a plain dot product, and keeps rows when it grows', async () => {
    const { SimdMatrix } = await import('../src/vectors/simd.js');
    const m = SimdMatrix.create(8, 2);
    assert.ok(m, 'WebAssembly SIMD is available on Node 20');
    const rows = Array.from({ length: 5 }, (_, r) => Float32Array.from({ length: 8 }, (_, j) => Math.sin(r * 8 + j)));
    m.data.set(rows[0]!, 0);
    m.data.set(rows[1]!, 8);
    m.reserve(8);
    rows.slice(2).forEach((row, i) => m.data.set(row, (i + 2) * 8));
    const query = Float32Array.from({ length: 8 }, (_, j) => Math.cos(j));
    const scores = m.scores(query, 5);
    rows.forEach((row, r) => {
      const expected = row.reduce((s, x, j) => s + x * query[j]!, 0);
      assert.ok(Math.abs(scores[r]! - expected) < 1e-5, `row ${r}: ${scores[r]} vs ${expected}`);
    });
    assert.equal(SimdMatrix.create(6, 2), undefined, 'widths that are not a multiple of 4 use the JS path');
  });
});
