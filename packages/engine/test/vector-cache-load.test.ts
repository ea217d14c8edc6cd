import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { binaryVectorSql, vectorFromBase64 } from '../src/db/vector-copy.js';
import { parseTsvector, parseTsvectorByPattern } from '../src/keywords/tsvector.js';
import { roundHalfUp } from '../src/vectors/kernels/int16-matrix.js';
import { VectorCache } from '../src/vectors/vector-cache.js';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';

/**
 * A bank's in-memory copy holds exactly what the database holds: every vector (read in binary), every keyword term
 * with its count, and every memory as the store reads it, in plaintext and under encryption at rest.
 */

const KEY = Buffer.alloc(32, 23).toString('base64');
const BANK = 'load';

/** Memories with what a row can carry: apostrophes and non-ASCII text, context, metadata, tags, dates, documents. */
function items(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    content: `Memory ${i}: O'Brien's café trip ${i % 2 ? 'to the coast' : 'naïve résumé'} — "quoted" note, backslash \\ ${i * 13}.`,
    ...(i % 3 === 0 ? { context: `context ${i} with 'quotes'` } : {}),
    ...(i % 4 === 0 ? { metadata: { source: `s${i}`, 'key with space': 'välue' } } : {}),
    ...(i % 5 === 0 ? { tags: ['alpha', `t${i}`] } : {}),
    ...(i % 2 === 0 ? { timestamp: new Date(Date.UTC(2024, 1, 3, 4, 5, 6, i)).toISOString() } : {}),
    ...(i % 6 === 0 ? { document_id: `doc-${i}` } : {}),
  }));
}

interface StoredRow {
  id: string;
  vector: string;
  binary: string;
  token_count: number;
  seq: number;
  batch_id: string;
  occurred_ms: number | null;
}

/** Compares the bank's copy, loaded from scratch, with the database row by row. */
async function assertCopyMatches(engine: TestEngine): Promise<void> {
  const { db, store } = engine.engine;
  const cache = new VectorCache(store, 384, 250_000_000, 7);
  const [bank] = await cache.banks(db, 'default', [BANK]);
  const rows = await db.query<StoredRow>(
    `SELECT id, embedding::text AS vector, ${binaryVectorSql('embedding')} AS binary, token_count, seq,
       batch_id::text AS batch_id, (extract(epoch FROM occurred_at) * 1000)::float8 AS occurred_ms
     FROM memories WHERE tenant = 'default' AND bank_id = $1`,
    [BANK],
  );
  const terms = await db.query<{ id: string; lexeme: string; n: number }>(
    `SELECT m.id, t.lexeme, COALESCE(array_length(t.positions, 1), 1) AS n
     FROM memories m, unnest(m.fts) AS t WHERE m.tenant = 'default' AND m.bank_id = $1`,
    [BANK],
  );
  assert.ok(rows.length >= 30);
  assert.equal(bank!.size, rows.length);
  const probe = Float32Array.from({ length: 384 }, (_, i) => Math.cos(i * 0.37));
  for (const row of rows) {
    const fromText = Float32Array.from(JSON.parse(row.vector) as number[]);
    // The binary read gives the very floats of the text form.
    assert.deepEqual(vectorFromBase64(row.binary), fromText);
    let dot = 0;
    for (let i = 0; i < fromText.length; i++) dot += fromText[i]! * probe[i]!;
    assert.ok(Math.abs(bank!.cosine(row.id, probe) - dot) < 1e-3, `the cosine of ${row.id}`);
    const expected = new Map(terms.filter((t) => t.id === row.id).map((t) => [t.lexeme, t.n]));
    const doc = bank!.keywordDoc(row.id)!;
    assert.deepEqual(new Map(doc.terms()), expected, `the terms of ${row.id}`);
    assert.equal(
      doc.length,
      [...expected.values()].reduce((a, b) => a + b, 0),
    );
    const meta = bank!.get(row.id)!;
    assert.deepEqual(meta.memory, await store.get('default', BANK, row.id));
    assert.equal(meta.tokenCount, row.token_count);
    assert.equal(meta.seq, row.seq);
    assert.equal(meta.batchId, row.batch_id);
    assert.equal(meta.occurredAt, row.occurred_ms);
  }
}

describe('loading a bank copy', () => {
  let plain: TestEngine;
  let encrypted: TestEngine;
  before(async () => {
    [plain, encrypted] = await Promise.all([
      startTestEngine(),
      startTestEngine({ MNEMOS_API_ENCRYPTION_MASTER_KEY: KEY }),
    ]);
    for (const engine of [plain, encrypted]) {
      const answer = await call(engine.url, 'POST', `/v1/default/banks/${BANK}/memories`, { items: items(40) });
      assert.equal(answer.status, 200);
    }
  });
  after(async () => {
    await Promise.all([plain?.dispose(), encrypted?.dispose()]);
  });

  it('holds the vectors, terms and memories the database holds', async () => {
    await assertCopyMatches(plain);
  });

  it('holds them under encryption at rest too', async () => {
    await assertCopyMatches(encrypted);
  });
});

describe('the tsvector scan', () => {
  it('reads what the pattern reads, for well-formed and malformed text alike', () => {
    const fixed = [
      "'a':1 'b':2,3",
      "'it''s':1A,2B 'x'",
      "'a':",
      "'a':x 'b'",
      "'abc''",
      "'a''''b':1,",
      "z 'q':1,3C 'r'",
    ];
    const alphabet = "'a:1,AB b'' ";
    let seed = 1;
    const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647) * alphabet.length;
    const generated = Array.from({ length: 5000 }, (_, i) =>
      Array.from({ length: i % 15 }, () => alphabet[Math.floor(random())]).join(''),
    );
    for (const text of [...fixed, ...generated]) {
      const scanned = parseTsvector(text);
      const matched = parseTsvectorByPattern(text);
      assert.deepEqual([...scanned.terms], [...matched.terms], text);
      assert.equal(scanned.length, matched.length, text);
    }
  });
});

describe('the quantization rounding', () => {
  it('rounds every value as Math.round does, halves and the doubles next to them included', () => {
    const values = [0.49999999999999994, -0.49999999999999994, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, -0.4, -1e-300, 1e-300];
    for (let k = -32768; k <= 32767; k += 7) values.push(k, k + 0.5, k + 0.5 - 2 ** -40, k + 0.5 + 2 ** -40, k - 1e-9);
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let i = 0; i < 100_000; i++)
      values.push((random() - 0.5) * 65534, (random() - 0.5) * 2 ** -Math.floor(random() * 60));
    for (const x of values) assert.equal(roundHalfUp(x) + 0, Math.round(x) + 0, String(x));
  });
});
