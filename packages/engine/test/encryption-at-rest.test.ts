// test-runner: long (started first, so the suite does not wait for it at the end)
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { encryptExisting, rotateKey } from '../src/crypto/admin.js';
import { normaliseWord } from '../src/crypto/normalise.js';
import { startEngine, type RunningEngine } from '../src/index.js';
import { call, sharedLocalModel, tempHome, testEnv } from './helpers/engine.js';

/**
 * Encryption at rest end to end: the real engine on PGlite with the real model. Markers retained with a
 * key are found nowhere under MNEMOS_HOME once the engine stops; recall and keyword search answer the same with and
 * without encryption; wrong keys, tampering, moved ciphertexts, rotation and encrypt-existing.
 */

const KEY = Buffer.alloc(32, 11).toString('base64');
const KEY2 = Buffer.alloc(32, 23).toString('base64');
const MARKERS = ['Zorblaxquiff', 'Quintelmorphia', 'Vexhollowbrand'];

const CORPUS = [
  `Alice's sister ${MARKERS[0]} keeps three cats in a flat above the bakery.`,
  `The password hint for the garage is ${MARKERS[1]} and the code changes every month.`,
  'Bob prefers green tea in the morning and black coffee after lunch.',
  'The team retrospective moved to Thursdays because of the release schedule.',
  'Carol is training for the Berlin marathon and runs forty kilometres a week.',
  'Dave fixed the flaky integration tests by pinning the database version.',
  'The quarterly budget review is due before the end of March.',
  'Erin adopted two kittens named Pepper and Salt from the animal shelter.',
  'Running shoes wear out after about eight hundred kilometres.',
  'The bakery on the corner sells sourdough bread on weekends only.',
];
const QUERIES = [
  'Who keeps cats?',
  'What does Bob drink?',
  'marathon training',
  'bakery bread',
  'tests database',
  'budget March',
  'kittens shelter',
];

type Hit = {
  id: string;
  text: string;
  score: number;
  scores: Record<string, number>;
  metadata: Record<string, string>;
  context: string | null;
};

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) out.push(...filesUnder(full));
    else out.push(full);
  }
  return out;
}

/** Every needle (and its lowercase and stemmed forms) found in any file under `dir`. */
function scan(dir: string, needles: readonly string[]): string[] {
  const forms = [...new Set(needles.flatMap((n) => [n, n.toLowerCase(), normaliseWord(n) ?? n]))];
  const found: string[] = [];
  for (const file of filesUnder(dir)) {
    const bytes = readFileSync(file);
    for (const form of forms) if (bytes.includes(Buffer.from(form))) found.push(`${form} in ${file}`);
  }
  return found;
}

async function start(home: string, extra: Record<string, string> = {}): Promise<RunningEngine> {
  return startEngine({ env: testEnv(home, extra), engine: { model: await sharedLocalModel() } });
}

async function retainCorpus(url: string, bank: string): Promise<string[]> {
  const r = await call<{ memory_ids: string[] }>(url, 'POST', `/v1/default/banks/${bank}/memories`, {
    items: CORPUS.map((content, i) => ({
      content,
      context: `context ${i} ${MARKERS[2]}`,
      metadata: { note: `${MARKERS[2]} ${i}` },
    })),
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.memory_ids;
}

async function recall(url: string, bank: string, query: string): Promise<Hit[]> {
  const r = await call<{ results: Hit[] }>(url, 'POST', `/v1/default/banks/${bank}/memories/recall`, { query });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.results;
}

async function list(url: string, bank: string, q: string): Promise<string[]> {
  const r = await call<{ items: Hit[] }>(url, 'GET', `/v1/default/banks/${bank}/memories?q=${encodeURIComponent(q)}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.items.map((m) => m.text).sort();
}

const view = (hits: Hit[]) => hits.map((h) => ({ text: h.text, score: h.score, scores: h.scores }));

describe('encryption at rest', () => {
  const plainHome = tempHome();
  const encHome = tempHome();
  let plain: RunningEngine;
  let enc: RunningEngine;
  let encIds: string[] = [];

  before(async () => {
    [plain, enc] = await Promise.all([
      start(plainHome.path),
      start(encHome.path, { MNEMOS_API_ENCRYPTION_MASTER_KEY: KEY }),
    ]);
    await retainCorpus(plain.url, 'alice');
    encIds = await retainCorpus(enc.url, 'alice');
  });

  after(async () => {
    await plain?.close().catch(() => undefined);
    await enc?.close().catch(() => undefined);
    plainHome.remove();
    encHome.remove();
  });

  it('stores no plaintext body: text, context and metadata columns are empty, body_enc is set', async () => {
    const rows = await enc.engine.db.query<{
      text: string | null;
      context: string | null;
      metadata: object;
      body_enc: Uint8Array | null;
      fts: string;
    }>('SELECT text, context, metadata, body_enc, fts::text AS fts FROM memories');
    assert.equal(rows.length, CORPUS.length);
    for (const r of rows) {
      assert.equal(r.text, null);
      assert.equal(r.context, null);
      assert.deepEqual(r.metadata, {});
      assert.ok(r.body_enc !== null && r.body_enc.length > 40);
      assert.match(r.fts, /^('[0-9a-f]{32}':[\d,]+ ?)+$/);
    }
    const version = await call<{ features: { encryption: boolean } }>(enc.url, 'GET', '/version');
    assert.equal(version.body.features.encryption, true);
  });

  it('recall answers the same with and without encryption on the same data', async () => {
    for (const q of QUERIES) {
      const [a, b] = await Promise.all([recall(plain.url, 'alice', q), recall(enc.url, 'alice', q)]);
      assert.deepEqual(view(b), view(a), q);
      assert.ok(
        b.some((h) => h.scores.keyword !== undefined),
        `keyword arm matched nothing for ${q}`,
      );
    }
    const hit = (await recall(enc.url, 'alice', 'Who keeps cats above the bakery?')).find((h) =>
      h.text.includes(MARKERS[0]!),
    );
    assert.ok(hit);
    assert.match(hit.context ?? '', new RegExp(MARKERS[2]!));
    assert.match(hit.metadata.note ?? '', new RegExp(MARKERS[2]!));
  });

  it('keyword-only matches (the list q filter and the keyword arm) are the same with and without encryption', async () => {
    for (const q of [
      'cats',
      'kilometres',
      'bakery sourdough',
      MARKERS[1]!.toLowerCase(),
      'kitten',
      'nothingmatcheshere',
    ]) {
      assert.deepEqual(await list(enc.url, 'alice', q), await list(plain.url, 'alice', q), q);
      const keywordOnly = async (url: string) =>
        (await recall(url, 'alice', q))
          .filter((h) => h.scores.keyword !== undefined)
          .map((h) => [h.text, h.scores.keyword]);
      assert.deepEqual(await keywordOnly(enc.url), await keywordOnly(plain.url), q);
    }
  });

  it('retain stays idempotent with the keyed dedup hash, and edits re-encrypt', async () => {
    const again = await retainCorpus(enc.url, 'alice');
    assert.deepEqual(again, encIds);
    const patched = await call<Hit>(enc.url, 'PATCH', `/v1/default/banks/alice/memories/${encIds[2]}`, {
      text: 'Bob switched to oolong tea in the morning.',
      metadata: { note: 'edited' },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.text, 'Bob switched to oolong tea in the morning.');
    const got = await call<Hit>(enc.url, 'GET', `/v1/default/banks/alice/memories/${encIds[2]}`);
    assert.equal(got.body.text, 'Bob switched to oolong tea in the morning.');
    assert.deepEqual(got.body.metadata, { note: 'edited' });
    assert.equal(got.body.context, `context 2 ${MARKERS[2]!}`);
    assert.deepEqual(await list(enc.url, 'alice', 'oolong'), ['Bob switched to oolong tea in the morning.']);
    const [row] = await enc.engine.db.query<{ text: string | null; content_hash: string }>(
      'SELECT text, content_hash FROM memories WHERE id = $1',
      [encIds[2]!],
    );
    assert.equal(row?.text, null);
  });

  it('a tampered ciphertext is detected and never returned; a ciphertext moved to another row fails too', async () => {
    const [victim, source, target] = [encIds[4]!, encIds[5]!, encIds[6]!];
    await enc.engine.db.query(
      `UPDATE memories SET body_enc = overlay(body_enc placing '\\xff'::bytea from 60 for 1) WHERE id = $1`,
      [victim],
    );
    await enc.engine.db.query(
      'UPDATE memories SET body_enc = (SELECT body_enc FROM memories WHERE id = $1) WHERE id = $2',
      [source, target],
    );
    const hits = await recall(enc.url, 'alice', 'marathon running tests kilometres');
    assert.ok(!hits.some((h) => h.id === victim || h.id === target), JSON.stringify(view(hits)));
    assert.ok(
      hits.some((h) => h.id === source),
      'the untouched original still decrypts',
    );
    const listed = await call<{ items: Hit[] }>(enc.url, 'GET', '/v1/default/banks/alice/memories?limit=100');
    assert.ok(!listed.body.items.some((m) => m.id === victim || m.id === target));
    const got = await call(enc.url, 'GET', `/v1/default/banks/alice/memories/${victim}`);
    assert.equal(got.status, 404);
    assert.ok(enc.engine.codec.encrypted);
    assert.ok((enc.engine.codec as unknown as { integrityFailures: number }).integrityFailures >= 2);
    await enc.engine.db.query('DELETE FROM memories WHERE id = ANY($1::uuid[])', [[victim, target]]);
  });

  it('after the engine stops, no marker or marker term appears in any file under MNEMOS_HOME', async () => {
    await enc.close();
    assert.deepEqual(scan(encHome.path, MARKERS), []);
    // The same scan finds them in the plaintext engine's files (the scan works).
    await plain.close();
    assert.ok(scan(plainHome.path, MARKERS).length > 0);
  });

  it('a wrong key is refused with encryption_key_mismatch; no key is refused; the right key recalls', async () => {
    await assert.rejects(
      start(encHome.path, { MNEMOS_API_ENCRYPTION_MASTER_KEY: KEY2 }),
      (e: Error) => /^encryption_key_mismatch: /.test(e.message) && !e.message.includes('\n'),
    );
    await assert.rejects(start(encHome.path), (e: Error) =>
      /is encrypted at rest but MNEMOS_API_ENCRYPTION_MASTER_KEY is not set/.test(e.message),
    );
    await assert.rejects(
      start(encHome.path, { MNEMOS_API_ENCRYPTION_MASTER_KEY: 'c2hvcnQ=' }),
      (e: Error) =>
        /MNEMOS_API_ENCRYPTION_MASTER_KEY must decode to exactly 32 bytes/.test(e.message) && !e.message.includes('\n'),
    );
    await assert.rejects(
      start(encHome.path, { MNEMOS_API_ENCRYPTION_MASTER_KEY: 'not*base64*at*all' }),
      (e: Error) => /MNEMOS_API_ENCRYPTION_MASTER_KEY is not base64/.test(e.message) && !e.message.includes('\n'),
    );
    enc = await start(encHome.path, { MNEMOS_API_ENCRYPTION_MASTER_KEY: KEY });
    assert.ok((await recall(enc.url, 'alice', 'Who keeps cats?')).some((h) => h.text.includes(MARKERS[0]!)));
  });

  it('rotate-key re-wraps the data keys without touching the bodies; the old key is then refused', async () => {
    const before = await enc.engine.db.query<{ id: string; body_enc: Uint8Array }>(
      'SELECT id, body_enc FROM memories ORDER BY id',
    );
    // Online rotation: begin accepts both keys, finish leaves only the new one.
    const outcome = await rotateKey(enc.engine.db, Buffer.from(KEY, 'base64'), Buffer.from(KEY2, 'base64'), 'begin');
    assert.equal(outcome.banks, 1);
    await enc.close();
    const withNew = await start(encHome.path, { MNEMOS_API_ENCRYPTION_MASTER_KEY: KEY2 });
    assert.ok((await recall(withNew.url, 'alice', 'Who keeps cats?')).some((h) => h.text.includes(MARKERS[0]!)));
    await rotateKey(withNew.engine.db, Buffer.from(KEY, 'base64'), Buffer.from(KEY2, 'base64'), 'finish');
    const after = await withNew.engine.db.query<{ id: string; body_enc: Uint8Array }>(
      'SELECT id, body_enc FROM memories ORDER BY id',
    );
    assert.deepEqual(
      after.map((r) => Buffer.from(r.body_enc).toString('hex')),
      before.map((r) => Buffer.from(r.body_enc).toString('hex')),
    );
    await withNew.close();
    await assert.rejects(start(encHome.path, { MNEMOS_API_ENCRYPTION_MASTER_KEY: KEY }), (e: Error) =>
      /^encryption_key_mismatch/.test(e.message),
    );
    enc = await start(encHome.path, { MNEMOS_API_ENCRYPTION_MASTER_KEY: KEY2 });
    assert.deepEqual(await list(enc.url, 'alice', 'cats'), [CORPUS[0]]);
    await enc.close();
  });

  it('a plaintext database started with a key is refused until encrypt-existing has run; then nothing is readable', async () => {
    await assert.rejects(start(plainHome.path, { MNEMOS_API_ENCRYPTION_MASTER_KEY: KEY }), (e: Error) =>
      /run `mnemos encrypt-existing`/.test(e.message),
    );
    plain = await start(plainHome.path);
    const before = await recall(plain.url, 'alice', 'Who keeps cats?');
    const outcome = await encryptExisting(plain.engine.db, Buffer.from(KEY, 'base64'));
    assert.equal(outcome.encrypted, CORPUS.length);
    // Every table that held plaintext bodies or names holds none now, and still has its rows.
    for (const [table, plaintext] of [
      ['memory_history', 'text IS NOT NULL'],
      ['memory_entities', 'name IS NOT NULL'],
    ] as const) {
      const [rows] = await plain.engine.db.query<{ total: number; plain: number }>(
        `SELECT count(*)::int AS total, count(*) FILTER (WHERE ${plaintext})::int AS plain FROM ${table}`,
      );
      assert.ok(rows!.total > 0, `${table} has rows to encrypt`);
      assert.equal(rows!.plain, 0, `${table} holds no plaintext`);
    }
    await plain.close();
    await assert.rejects(start(plainHome.path), (e: Error) => /is encrypted at rest/.test(e.message));
    plain = await start(plainHome.path, { MNEMOS_API_ENCRYPTION_MASTER_KEY: KEY });
    assert.deepEqual(view(await recall(plain.url, 'alice', 'Who keeps cats?')), view(before));
    await plain.close();
    const left = scan(join(plainHome.path, 'db', 'base'), MARKERS);
    assert.deepEqual(left, [], 'table files hold no plaintext after encrypt-existing');
  });
});
