import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mayWriteMemories, type Database, type SqlParam } from '../src/db/database.js';
import { TopK } from '../src/vectors/kernels/bank-vectors.js';
import type { VectorRowMeta } from '../src/vectors/storage/indexed-row.js';
import { vectorLiteral } from '../src/memory/vector-literal.js';
import { VectorCache } from '../src/vectors/vector-cache.js';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';
import { indexRow } from './helpers/index-row.js';
import { asServer } from './helpers/as-server.js';

/** The in-memory vector cache answers exactly what pgvector's exact scan answers, and follows every kind of write. */

let engine: TestEngine;
const topics = [
  'sailing',
  'baking bread',
  'chess openings',
  'mountain hiking',
  'jazz piano',
  'tax forms',
  'garden roses',
  'space telescopes',
];

before(async () => {
  engine = await startTestEngine();
  const items = Array.from({ length: 120 }, (_, i) => ({
    content: `Memory ${i}: a note about ${topics[i % topics.length]} and detail ${i * 7}.`,
    tags: i % 3 === 0 ? ['even'] : [],
  }));
  await call(engine.url, 'POST', '/v1/default/banks/vc/memories', { items });
  await call(engine.url, 'POST', '/v1/default/banks/vc/memories', {
    items: items.slice(0, 20).map((x) => ({ ...x, content: `${x.content} (other space)` })),
    space: 'other',
  });
});
after(async () => {
  await engine?.dispose();
});

async function sqlTop(query: Float32Array, k: number, space = 'default'): Promise<string[]> {
  const rows = await engine.engine.db.query<{ id: string }>(
    `SELECT id FROM memories WHERE tenant = 'default' AND bank_id = 'vc' AND space = $2 AND state = 'valid'
     ORDER BY embedding <=> $1::vector, id LIMIT ${k}`,
    [vectorLiteral(query), space],
  );
  return rows.map((r) => r.id);
}

/** The `k` nearest memories the bank's index holds (brought up to date first), as recall's semantic arm finds them. */
async function searchIndex(
  cache: VectorCache,
  bankId: string,
  query: Float32Array,
  k: number,
  keep: (m: VectorRowMeta) => boolean,
): Promise<Array<{ id: string; score: number }>> {
  const top = new TopK();
  for (const bank of await cache.banks(engine.engine.db, 'default', [bankId])) bank.search(query, k, keep, top);
  return top.results();
}

const keepSpace = (space: string) => (m: { space: string; valid: boolean }) => m.valid && m.space === space;

describe('vector cache', () => {
  it('matches the exact scan of pgvector', async () => {
    const cache = new VectorCache(engine.engine.store, 384);
    for (const q of ['boats on the sea', 'sourdough', 'a chess game', 'the night sky']) {
      const [v] = await engine.engine.embedder.embed([q], 'query');
      const fromCache = (await searchIndex(cache, 'vc', v!, 10, keepSpace('default'))).map((h) => h.id);
      assert.deepEqual(fromCache, await sqlTop(v!, 10));
      const otherSpace = (await searchIndex(cache, 'vc', v!, 5, keepSpace('other'))).map((h) => h.id);
      assert.deepEqual(otherSpace, await sqlTop(v!, 5, 'other'));
    }
  });

  it('loads a bank a page at a time (cursor) into the same index as one query would', async () => {
    const whole = new VectorCache(engine.engine.store, 384);
    const paged = new VectorCache(engine.engine.store, 384, 250_000, 7);
    for (const q of ['boats on the sea', 'jazz piano chords']) {
      const [v] = await engine.engine.embedder.embed([q], 'query');
      const a = await searchIndex(whole, 'vc', v!, 50, () => true);
      const b = await searchIndex(paged, 'vc', v!, 50, () => true);
      assert.deepEqual(b, a);
    }
    const [bankWhole] = await whole.banks(engine.engine.db, 'default', ['vc']);
    const [bankPaged] = await paged.banks(engine.engine.db, 'default', ['vc']);
    assert.equal(bankPaged!.size, 140);
    assert.equal(bankPaged!.size, bankWhole!.size);
    assert.equal(bankPaged!.documentFrequency('chess'), bankWhole!.documentFrequency('chess'));
    assert.ok(bankPaged!.documentFrequency('chess') > 0);
  });

  it('reads more than a page of changes since the last recall through the cursor, missing none', async () => {
    const paged = new VectorCache(engine.engine.store, 384, 250_000, 7);
    const [v] = await engine.engine.embedder.embed(['glacier expedition'], 'query');
    await searchIndex(paged, 'vc-delta', v!, 5, () => true);
    const few = await call<{ memory_ids: string[] }>(engine.url, 'POST', '/v1/default/banks/vc-delta/memories', {
      items: Array.from({ length: 5 }, (_, i) => ({ content: `A few changes ${i}: ${topics[i]} notes.` })),
    });
    let top = await searchIndex(paged, 'vc-delta', v!, 50, () => true);
    assert.equal(top.length, 5, 'a delta within one page');
    const many = await call<{ memory_ids: string[] }>(engine.url, 'POST', '/v1/default/banks/vc-delta/memories', {
      items: Array.from({ length: 30 }, (_, i) => ({
        content: `Glacier expedition day ${i}: ${topics[i % topics.length]}.`,
      })),
    });
    await call(engine.url, 'DELETE', `/v1/default/banks/vc-delta/memories/${few.body.memory_ids[0]}`);
    top = await searchIndex(paged, 'vc-delta', v!, 50, () => true);
    const whole = await searchIndex(new VectorCache(engine.engine.store, 384), 'vc-delta', v!, 50, () => true);
    assert.equal(top.length, 34);
    assert.deepEqual(top, whole);
    assert.ok(many.body.memory_ids.every((id) => top.some((h) => h.id === id)));
    assert.ok(!top.some((h) => h.id === few.body.memory_ids[0]), 'the deleted memory is gone');
    await call(engine.url, 'DELETE', '/v1/default/banks/vc-delta');
  });

  it('preloads the most recently written banks that fit its budget', async () => {
    await call(engine.url, 'POST', '/v1/default/banks/vc-small/memories', {
      items: [{ content: 'A small bank.' }, { content: 'Written last.' }],
    });
    const cache = new VectorCache(engine.engine.store, 384, 64 * 1024); // bytes: two memories fit, 140 do not
    assert.equal(await cache.preload(engine.engine.db), 1);
    assert.ok(cache.has('default', 'vc-small'));
    assert.ok(!cache.has('default', 'vc'), 'a bank larger than the room left waits for its first recall');
    assert.ok(!cache.has('default', 'vc', 'compact'), 'whole or compact');
    const stopped = new VectorCache(engine.engine.store, 384);
    stopped.stop();
    assert.equal(await stopped.preload(engine.engine.db), 0);
    assert.ok(!stopped.has('default', 'vc-small'));
    // A bank still loading when the engine stops gives up at its next page instead of holding the shutdown.
    const stopping = new VectorCache(engine.engine.store, 384, 250_000, 1);
    const loading = stopping.banks(engine.engine.db, 'default', ['vc']);
    stopping.stop();
    await assert.rejects(loading, /the engine is stopping/);
    assert.ok(!stopping.has('default', 'vc'));
  });

  it('preloads a bank too large for a whole copy as a compact one, when that fits', async () => {
    await call(engine.url, 'DELETE', '/v1/default/banks/vc-small');
    // Bytes: 140 memories do not fit whole (about 2.8 KB each), but do compact (a few hundred bytes each).
    const cache = new VectorCache(engine.engine.store, 384, 200 * 1024);
    assert.equal(await cache.preload(engine.engine.db), 1);
    assert.ok(!cache.has('default', 'vc'));
    assert.equal(cache.cachedSize('default', 'vc', 'compact'), 140);
    const tight = new VectorCache(engine.engine.store, 384, 10 * 1024);
    assert.equal(await tight.preload(engine.engine.db), 0, 'nor compact in a smaller cache');
  });

  it("on a server, preloads a bank at or above the Postgres tier's threshold compact; embedded, skips it", async () => {
    const server = new VectorCache(engine.engine.store, 384);
    assert.equal(await server.preload(asServer(engine.engine.db), 100), 1);
    assert.equal(server.cachedSize('default', 'vc', 'compact'), 140, 'recall holds such a bank compact on a server');
    assert.ok(!server.has('default', 'vc'));
    const embedded = new VectorCache(engine.engine.store, 384);
    assert.equal(await embedded.preload(engine.engine.db, 100), 0, 'the Postgres tier searches it');
  });

  it('stores the same vector whether it went as text (a few memories) or in binary (larger batches)', async () => {
    const text = 'The lighthouse keeper rows to the island every Tuesday.';
    const alone = await call<{ memory_ids: string[] }>(engine.url, 'POST', '/v1/default/banks/vc-text/memories', {
      content: text,
    });
    const batch = await call<{ memory_ids: string[] }>(engine.url, 'POST', '/v1/default/banks/vc-binary/memories', {
      items: [text, 'Filler one.', 'Filler two.', 'Filler three.', 'Filler four.'].map((content) => ({ content })),
    });
    const [a] = await engine.engine.db.query<{ v: string }>('SELECT embedding::text AS v FROM memories WHERE id = $1', [
      alone.body.memory_ids[0]!,
    ]);
    const [b] = await engine.engine.db.query<{ v: string }>('SELECT embedding::text AS v FROM memories WHERE id = $1', [
      batch.body.memory_ids[0]!,
    ]);
    assert.ok(a && b);
    assert.equal(a.v, b.v);
  });

  it('asks the database nothing when nothing was written since its last synchronisation', async () => {
    // The engine's embedded database is this process's own: it knows when the memories table was written.
    const db = engine.engine.db;
    assert.notEqual(db.writeVersion, undefined);
    const statements: string[] = [];
    // The same database, with every query and transaction it is asked for written down.
    const counting = Object.create(db, {
      query: { value: (sql: string, params?: readonly SqlParam[]) => (statements.push(sql), db.query(sql, params)) },
      transaction: {
        value: (fn: Parameters<Database['transaction']>[0]) => (statements.push('transaction'), db.transaction(fn)),
      },
    }) as Database;
    const cache = new VectorCache(engine.engine.store, 384);
    await cache.banks(counting, 'default', ['vc']);
    assert.ok(statements.length > 0, 'the first use loads the bank');

    statements.length = 0;
    const [first] = await cache.banks(counting, 'default', ['vc']);
    await cache.banks(counting, 'default', ['vc']);
    assert.deepEqual(statements, [], 'no write happened, so there was nothing to read');

    const added = await call<{ memory_ids: string[] }>(engine.url, 'POST', '/v1/default/banks/vc/memories', {
      content: 'A lighthouse keeper logs the fog.',
    });
    const [synced] = await cache.banks(counting, 'default', ['vc']);
    assert.equal(statements.length, 2, 'a write since: the close of the bank`s open number, one synchronisation query');
    assert.equal(synced, first);
    assert.ok(synced!.get(added.body.memory_ids[0]!), 'the new memory is in the index');

    statements.length = 0;
    await cache.banks(counting, 'default', ['vc']);
    assert.deepEqual(statements, [], 'reading the changes is not a write');
  });

  it('tells reads of the memories table from statements that may write it', () => {
    const reads = [
      'SELECT id, updated_at FROM memories WHERE deleted IS NULL',
      "(SELECT 'row' AS kind, id FROM memories LIMIT 5) UNION ALL SELECT 'gone', id FROM memory_tombstones",
      'WITH recent AS (SELECT id FROM memories) SELECT count(*) FROM recent',
      'DECLARE sync NO SCROLL CURSOR FOR (SELECT id FROM memories LIMIT 10)',
      'INSERT INTO banks (tenant, bank_id) VALUES ($1, $2)',
    ];
    const writes = [
      'INSERT INTO memories (id) VALUES ($1)',
      'UPDATE memories SET state = $1',
      'DELETE FROM memories WHERE id = $1',
      'WITH gone AS (DELETE FROM memories RETURNING id) SELECT count(*) FROM gone',
      '(SELECT id FROM memories FOR UPDATE)',
      'ALTER TABLE memories ADD COLUMN x int',
      'TRUNCATE memories',
    ];
    assert.deepEqual(reads.filter(mayWriteMemories), []);
    assert.deepEqual(
      writes.filter((sql) => !mayWriteMemories(sql)),
      [],
    );
  });

  it('follows inserts, edits, invalidations and deletes made after it loaded', async () => {
    const cache = new VectorCache(engine.engine.store, 384);
    const [probe] = await engine.engine.embedder.embed(['volcano eruption lava'], 'query');
    await searchIndex(cache, 'vc', probe!, 5, keepSpace('default'));

    const added = await call<{ memory_ids: string[] }>(engine.url, 'POST', '/v1/default/banks/vc/memories', {
      content: 'The volcano eruption sent lava down the hill.',
    });
    let top = await searchIndex(cache, 'vc', probe!, 5, keepSpace('default'));
    assert.equal(top[0]?.id, added.body.memory_ids[0]);

    const victim = top[1]!.id;
    await call(engine.url, 'PATCH', `/v1/default/banks/vc/memories/${added.body.memory_ids[0]}`, {
      text: 'A quiet afternoon of knitting.',
    });
    top = await searchIndex(cache, 'vc', probe!, 5, keepSpace('default'));
    assert.notEqual(top[0]?.id, added.body.memory_ids[0]);
    assert.deepEqual(
      top.map((h) => h.id),
      await sqlTop(probe!, 5),
    );

    await call(engine.url, 'PATCH', `/v1/default/banks/vc/memories/${victim}`, { state: 'invalidated' });
    top = await searchIndex(cache, 'vc', probe!, 5, keepSpace('default'));
    assert.ok(!top.some((h) => h.id === victim));

    const gone = top[0]!.id;
    await call(engine.url, 'DELETE', `/v1/default/banks/vc/memories/${gone}`);
    top = await searchIndex(cache, 'vc', probe!, 5, keepSpace('default'));
    assert.ok(!top.some((h) => h.id === gone));
    assert.deepEqual(
      top.map((h) => h.id),
      await sqlTop(probe!, 5),
    );

    await call(engine.url, 'DELETE', '/v1/default/banks/vc');
    top = await searchIndex(cache, 'vc', probe!, 5, keepSpace('default'));
    assert.deepEqual(top, []);
  });
});

describe('int16 matrix', () => {
  const unit = (seed: number, d: number) => {
    const v = Float32Array.from({ length: d }, (_, j) => (Math.sin(seed * 12.9898 + j * 78.233) * 43758.5453) % 1);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  };
  const exact = (a: Float32Array, b: Float32Array) => a.reduce((s, x, j) => s + x * b[j]!, 0);

  it('scores rows like the float dot product (within the quantization error), and keeps rows when it grows', async () => {
    const { Int16Matrix } = await import('../src/vectors/kernels/int16-matrix.js');
    const d = 384;
    const m = Int16Matrix.create(d, 2);
    assert.ok(m, 'WebAssembly SIMD is available on Node 20');
    const rows = Array.from({ length: 50 }, (_, r) => unit(r + 1, d));
    m.set(0, rows[0]!);
    m.set(1, rows[1]!);
    m.reserve(4);
    m.set(2, rows[2]!);
    m.set(3, rows[3]!);
    m.reserve(64);
    rows.slice(4).forEach((row, i) => m.set(i + 4, row));
    const query = unit(1000, d);
    const scores = m.scores(query, rows.length);
    let worst = 0;
    rows.forEach((row, r) => {
      worst = Math.max(worst, Math.abs(scores[r]! - exact(row, query)));
      assert.ok(Math.abs(m.dot(r, query) - exact(row, query)) < 1e-4, `dot of row ${r}`);
    });
    assert.ok(worst < 1e-4, `largest error ${worst}`);
    // A row scores itself at about 1 (unit vectors).
    assert.ok(Math.abs(m.scores(rows[7]!, rows.length)[7]! - 1) < 1e-4);
    assert.equal(Int16Matrix.create(12, 2), undefined, 'widths that are not a multiple of 8 use the JS path');
  });

  it('hands recall the vectors of the ids its banks hold, each its own row, in int16 and in floats', async () => {
    const { BankVectors } = await import('../src/vectors/kernels/bank-vectors.js');
    const { IndexArms } = await import('../src/recall/arms.js');
    // 384 wide: held as int16 (WebAssembly); 12 wide: held as floats.
    for (const d of [384, 12]) {
      const first = new BankVectors(d);
      const second = new BankVectors(d);
      const rows = Array.from({ length: 6 }, (_, r) => unit(r + 1, d));
      rows.forEach((v, r) => (r % 2 === 0 ? first : second).upsert(indexRow(`m${r}`, 0), new Map(), v));
      const arms = new IndexArms([first, second], () => true);
      const found = arms.vectors(['m4', 'absent', 'm1', 'm0', 'm5'], d);
      assert.deepEqual([...found.keys()], ['m4', 'm1', 'm0', 'm5'], `${d}: held ids only, in the order asked`);
      for (const [id, v] of found) {
        const row = rows[Number(id.slice(1))]!;
        assert.equal(v.length, d);
        // Each its own row (the int16 step is below 1e-4 on unit vectors), and no other's.
        assert.ok(
          v.every((x, j) => Math.abs(x - row[j]!) < 1e-4),
          `${d}: ${id} holds its own vector`,
        );
      }
    }
  });

  it('keeps the ranking of the float scan on real embeddings', async () => {
    const { BankVectors, TopK } = await import('../src/vectors/kernels/bank-vectors.js');
    const texts = Array.from(
      { length: 200 },
      (_, i) => `Note ${i}: ${topics[i % topics.length]} with detail ${(i * 37) % 101}.`,
    );
    const vectors = await engine.engine.embedder.embed(texts, 'document');
    const bank = new BankVectors(384);
    vectors.forEach((v, i) => bank.upsert(indexRow(String(i), 0, texts[i]), new Map(), v));
    for (const q of ['boats on the sea', 'sourdough', 'a chess game', 'the night sky']) {
      const [query] = await engine.engine.embedder.embed([q], 'query');
      const top = new TopK();
      bank.search(query!, 20, () => true, top);
      const quantized = top.results();
      const floats = vectors
        .map((v, i) => ({ id: String(i), score: exact(v, query!) }))
        .sort((a, b) => b.score - a.score);
      // The same ranking as the float scan, each score within the quantization error.
      assert.deepEqual(
        quantized.map((h) => h.id),
        floats.slice(0, 20).map((h) => h.id),
        q,
      );
      quantized.forEach((hit, r) => assert.ok(Math.abs(hit.score - floats[r]!.score) < 1e-4, `${q}: rank ${r}`));
    }
  });
});
