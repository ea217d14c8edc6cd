// test-runner: long (started first, so the suite does not wait for it at the end)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bankIndexName } from '../src/db/migrations/007_recall_index.js';
import { BankIndexes, bankIndexState } from '../src/db/recall-index.js';
import { vectorLiteral } from '../src/memory/vector-literal.js';
import { IndexArms } from '../src/recall/arms.js';
import { recall, type RecallDependencies } from '../src/recall/pipeline.js';
import type { RecallOutcome } from '../src/recall/types.js';
import { BankVectors } from '../src/vectors/kernels/bank-vectors.js';
import { PostgresBankIndex } from '../src/vectors/storage/postgres-index.js';
import { VectorCache } from '../src/vectors/vector-cache.js';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';
import { loadLocomoText } from '../bench/locomo-text.js';
import { asServer } from './helpers/as-server.js';
import { indexRow } from './helpers/index-row.js';
import {
  checkFilterExpression,
  checkTagsAndTypes,
  FACTS,
  QUESTIONS,
  request,
  retainFactBanks,
  retainOn,
} from './helpers/recall-facts.js';

/**
 * The Postgres tier answers what the in-memory tier answers: the known memory of each question near the top, the
 * same filters, never a deleted memory; the in-memory cache drops its least recently used banks by size; and a keyword
 * matching thousands of memories is answered on both tiers.
 */

let engine: TestEngine;

/** Conversation turns about other things than the filter's memories: more than a recall ranks. */
const FILTER_FILLER = loadLocomoText().turns.slice(0, 150);

async function retain(
  tenant: string,
  bankId: string,
  texts: readonly string[],
  space = 'default',
  tags: string[] = [],
  on: TestEngine = engine,
) {
  return retainOn(on.engine)(tenant, bankId, texts, space, tags);
}

/** Recall's dependencies on the engine's parts, with its own cache and the Postgres tier from `minMemories`. */
function dependencies(
  minMemories: number | undefined,
  cache?: VectorCache,
  on: TestEngine = engine,
): RecallDependencies {
  const e = on.engine;
  return {
    db: e.db,
    index: cache ?? new VectorCache(e.store, 384),
    codec: e.codec,
    embedder: e.embedder,
    postgres: minMemories === undefined ? undefined : { search: new PostgresBankIndex(e.db, e.store), minMemories },
  };
}

const ids = (o: RecallOutcome, k = o.results.length) => o.results.slice(0, k).map((h) => h.memory.id);

let factIds: string[] = [];

before(async () => {
  engine = await startTestEngine({ MNEMOS_API_RECALL_POSTGRES_TIER_MIN_MEMORIES: '0' });
  factIds = await retainFactBanks(retain);
});
after(async () => {
  await engine?.dispose();
});

describe('the Postgres tier', () => {
  it('finds the known memory near the top for each question, as the in-memory tier does', async () => {
    const onPostgres = dependencies(0);
    const inMemory = dependencies(undefined);
    for (const [question, answer] of QUESTIONS) {
      const pg = await recall(onPostgres, request('main', question));
      const mem = await recall(inMemory, request('main', question));
      assert.equal(pg.trace?.tier, 'postgres');
      assert.equal(mem.trace?.tier, 'memory');
      assert.ok(ids(pg, 3).includes(factIds[answer]!), `${question}: the answer is in the Postgres tier's top 3`);
      assert.ok(ids(mem, 3).includes(factIds[answer]!), `${question}: the answer is in the in-memory tier's top 3`);
      assert.equal(
        pg.results[0]!.memory.id,
        mem.results[0]!.memory.id,
        `${question}: both tiers rank the same memory first`,
      );
      assert.deepEqual(new Set(ids(pg)), new Set(ids(mem)), `${question}: both tiers answer the same memories`);
    }
  });

  it('reads the stored vectors the newer-first step compares, in binary, exactly as stored', async () => {
    const e = engine.engine;
    const read = await new PostgresBankIndex(e.db, e.store).vectors({ tenant: 'default', bankIds: ['main'] }, factIds);
    const asText = await e.db.query<{ id: string; v: string }>(
      'SELECT id, embedding::text AS v FROM memories WHERE id = ANY($1::uuid[])',
      [factIds],
    );
    assert.equal(read.size, factIds.length);
    assert.equal(asText.length, factIds.length);
    for (const { id, v } of asText)
      assert.deepEqual(read.get(id), Float32Array.from(v.slice(1, -1).split(','), Number), id);
  });

  it('keeps a memory`s vector in its row, so reading a candidate`s vector takes no second lookup', async () => {
    const e = engine.engine;
    // Text and vector together past the 2 KB at which Postgres would move the vector out of the row by default.
    const long = FILTER_FILLER.slice(0, 12).join(' ').slice(0, 900);
    await retain('default', 'inline', [long]);
    const [row] = await e.db.query<{ bytes: number; toast: string }>(
      `SELECT pg_column_size(m.*)::int AS bytes, c.reltoastrelid::regclass::text AS toast
       FROM memories m JOIN pg_class c ON c.oid = m.tableoid WHERE m.bank_id = 'inline'`,
    );
    assert.ok(row!.bytes > 2100, `the row is ${row!.bytes} bytes`);
    const [chunks] = await e.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${row!.toast}`);
    assert.equal(chunks!.n, 0, 'no memory keeps a part of itself outside its row');
  });

  it('is what the engine uses when the threshold is 0', async () => {
    const r = await call<{ results: Array<{ id: string }> }>(
      engine.url,
      'POST',
      '/v1/default/banks/main/memories/recall',
      {
        query: 'Who has a cat?',
      },
    );
    assert.equal(r.status, 200);
    assert.equal(r.body.results[0]?.id, factIds[0]);
    const metrics = await fetch(`${engine.url}/metrics`).then((m) => m.text());
    assert.match(metrics, /mnemos_recall_tier_total\{tier="postgres"\} [1-9]/);
    assert.doesNotMatch(metrics, /mnemos_recall_tier_total\{tier="memory"\}/);
  });

  it('builds a vector index for each bank it searches, which its semantic arm can use', async () => {
    const db = engine.engine.db;
    const deps = dependencies(0);
    await recall(deps, request('main', 'Who has a cat?'));
    await deps.postgres!.search.indexes.built('default', 'main');
    assert.equal(await bankIndexState(db, 'default', 'main'), 'valid');
    assert.equal(
      await bankIndexState(db, 'default', 'elsewhere'),
      'none',
      'a bank never searched in Postgres has none',
    );
    const [query] = await engine.engine.embedder.embed(['a cat'], 'query');
    // On a table this small the planner prefers other plans: with them priced out, the plan shows the index matches.
    const plan = await db.transaction(async (tx) => {
      await tx.query('SET LOCAL enable_seqscan = off');
      await tx.query('SET LOCAL enable_bitmapscan = off');
      await tx.query('SET LOCAL enable_sort = off');
      return tx.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT m.id FROM memories m WHERE m.tenant = $1 AND m.bank_id = $2 AND m.embedding IS NOT NULL
         AND m.space = $3 ORDER BY m.embedding <=> $4::vector LIMIT 10`,
        ['default', 'main', 'default', vectorLiteral(query!)],
      );
    });
    const scans = plan.map((r) => r['QUERY PLAN']).filter((line) => line.includes(' Scan '));
    assert.match(scans.join('\n'), new RegExp(`Index Scan using ${bankIndexName('default', 'main')}`));
  });

  it('tells its owner when a build starts, once, and not for an index that is there', async () => {
    const db = engine.engine.db;
    const started: string[] = [];
    const indexes = new BankIndexes(db, { building: (tenant, bankId) => started.push(`${tenant}/${bankId}`) });
    indexes.request('default', 'announced');
    indexes.request('default', 'announced');
    await indexes.built('default', 'announced');
    assert.equal(await bankIndexState(db, 'default', 'announced'), 'valid');
    assert.deepEqual(started, ['default/announced']);
    const again = new BankIndexes(db, { building: (tenant, bankId) => started.push(`${tenant}/${bankId}`) });
    again.request('default', 'announced');
    await again.built('default', 'announced');
    assert.deepEqual(started, ['default/announced'], 'an index that exists is not built again');
  });

  it('never answers a memory of another bank, space or tenant', async () => {
    const deps = dependencies(0);
    for (const [question] of QUESTIONS) {
      const r = await recall(deps, request('main', question));
      assert.ok(r.results.length > 0);
      for (const hit of r.results) {
        assert.equal(hit.memory.bankId, 'main');
        assert.equal(hit.memory.space, 'default');
        assert.ok(factIds.includes(hit.memory.id), 'only memories retained in the default space of default/main');
      }
      const work = await recall(deps, request('main', question, { space: 'work' }));
      assert.ok(work.results.length > 0);
      assert.ok(work.results.every((h) => h.memory.space === 'work' && h.memory.text.endsWith('(noted at work)')));
      const acme = await recall(deps, request('main', question, { tenant: 'acme' }));
      assert.ok(acme.results.length > 0);
      assert.ok(acme.results.every((h) => h.memory.text.endsWith('(acme copy)')));
    }
  });

  it('honours tags and types', async () => {
    const deps = dependencies(0);
    await checkTagsAndTypes(retain, (r) => recall(deps, r));
  });

  for (const [tier, minMemories] of [
    ['postgres', 0],
    ['memory', undefined],
  ] as const) {
    it(`narrows the candidates by a filter expression before ranking (${tier} tier)`, async () => {
      const deps = dependencies(minMemories);
      await checkFilterExpression(engine.engine.service, FILTER_FILLER, async (r) => {
        const outcome = await recall(deps, r);
        assert.equal(outcome.trace?.tier, tier);
        return outcome;
      });
    });
  }

  it('never answers a deleted memory', async () => {
    const deps = dependencies(0);
    const [question, answer] = QUESTIONS[3]!;
    const before = await recall(deps, request('main', question));
    assert.equal(before.results[0]?.memory.id, factIds[answer]);
    await engine.engine.service.deleteMemory('default', 'main', factIds[answer]!);
    const afterDelete = await recall(deps, request('main', question));
    assert.ok(afterDelete.results.length > 0);
    assert.ok(!ids(afterDelete).includes(factIds[answer]!));
  });
});

describe('under encryption at rest', () => {
  // Bodies are sealed and the keyword index holds keyed tokens; vectors stay plain. The tier reads what the in-memory
  // copy reads (vectors, tokens, filter columns) and opens the pool's bodies through the same codec.
  let encrypted: TestEngine;
  let encryptedIds: string[] = [];
  before(async () => {
    encrypted = await startTestEngine({ MNEMOS_API_ENCRYPTION_MASTER_KEY: Buffer.alloc(32, 7).toString('base64') });
    encryptedIds = await retain('default', 'sealed', FACTS, 'default', [], encrypted);
  });
  after(async () => {
    await encrypted?.dispose();
  });

  it('answers what the in-memory tier answers', async () => {
    const onPostgres = dependencies(0, undefined, encrypted);
    const inMemory = dependencies(undefined, undefined, encrypted);
    for (const [question, answer] of QUESTIONS.slice(0, 5)) {
      const pg = await recall(onPostgres, request('sealed', question));
      const mem = await recall(inMemory, request('sealed', question));
      assert.equal(pg.trace?.tier, 'postgres');
      assert.ok(ids(pg, 3).includes(encryptedIds[answer]!), `${question}: the answer is in the top 3`);
      assert.equal(
        pg.results[0]!.memory.id,
        mem.results[0]!.memory.id,
        `${question}: both tiers rank the same memory first`,
      );
      assert.equal(pg.results[0]!.memory.text, mem.results[0]!.memory.text, 'bodies are opened');
      assert.deepEqual(
        pg.results.map((h) => h.scores['keyword']),
        pg.results.map((h) => mem.results.find((m) => m.memory.id === h.memory.id)?.scores['keyword']),
        `${question}: the same keyword scores on both tiers`,
      );
      assert.deepEqual(
        pg.results.map((h) => h.scores['coverage']),
        pg.results.map((h) => mem.results.find((m) => m.memory.id === h.memory.id)?.scores['coverage']),
        `${question}: the same share of the query's terms on both tiers`,
      );
      const gap = Math.abs(pg.results[0]!.relevance - mem.results[0]!.relevance);
      assert.ok(gap < 1e-3, `${question}: the same relevance on both tiers (${gap})`);
    }
  });
});

describe('the in-memory cache', () => {
  /** The cache bound that holds one and a half of these banks, measured. */
  async function oneAndAHalfBanks(): Promise<number> {
    for (const bank of ['lru-1', 'lru-2', 'lru-3']) await retain('default', bank, FACTS.slice(10));
    const probe = new VectorCache(engine.engine.store, 384);
    await probe.banks(engine.engine.db, 'default', ['lru-1']);
    assert.ok(probe.bytes > 0);
    return Math.floor(probe.bytes * 1.5);
  }

  it('drops the least recently used bank beyond its size; on a server the Postgres tier answers while one loads', async () => {
    const store = engine.engine.store;
    const bound = await oneAndAHalfBanks();
    const db = asServer(engine.engine.db);
    // Every bank not in memory is answered by the Postgres tier while it loads in the background.
    const cache = new VectorCache(store, 384, bound, 250, 0);
    const deps = { ...dependencies(1_000_000, cache), db };
    const question = 'Where does Iris volunteer?';
    for (const bank of ['lru-1', 'lru-2', 'lru-3']) {
      const r = await recall(deps, request(bank, question));
      assert.equal(r.trace?.tier, 'postgres', `${bank} is not in memory yet`);
      assert.match(r.results[0]!.memory.text, /Iris volunteers/);
      await cache.loading('default', bank);
      assert.notEqual(cache.cachedSize('default', bank), undefined, `${bank} was loaded in the background`);
      const again = await recall(deps, request(bank, question));
      assert.equal(again.trace?.tier, 'memory', `${bank} is in memory now`);
    }
    assert.equal(await bankIndexState(db, 'default', 'lru-1'), 'none', 'a bank below the threshold gets no HNSW index');
    assert.equal(cache.cachedSize('default', 'lru-1'), undefined, 'the least recently used bank was dropped');
    assert.equal(cache.cachedSize('default', 'lru-2'), undefined, 'two banks do not fit');
    assert.ok(cache.bytes <= bound);
    const evicted = await recall(deps, request('lru-1', question));
    assert.equal(evicted.trace?.tier, 'postgres');
    assert.match(evicted.results[0]!.memory.text, /Iris volunteers/);
  });

  it('on the embedded database loads a bank that fits within the recall, whatever its size', async () => {
    const store = engine.engine.store;
    const db = engine.engine.db;
    assert.equal(db.kind, 'embedded');
    const bound = await oneAndAHalfBanks();
    // No bank counts as quick to load (0): the embedded database waits for the load all the same.
    const cache = new VectorCache(store, 384, bound, 250, 0);
    const deps = dependencies(1_000_000, cache);
    for (const bank of ['lru-1', 'lru-2']) {
      const r = await recall(deps, request(bank, 'Where does Iris volunteer?'));
      assert.equal(r.trace?.tier, 'memory', `${bank} was loaded within the recall`);
      assert.match(r.results[0]!.memory.text, /Iris volunteers/);
    }
    assert.equal(cache.cachedSize('default', 'lru-1'), undefined, 'the least recently used bank was dropped');
  });

  it('never loads a bank the cache cannot hold: it is searched in Postgres, with its own index', async () => {
    const store = engine.engine.store;
    const db = engine.engine.db;
    await oneAndAHalfBanks();
    const tiny = new VectorCache(store, 384, 1024, 250, 0);
    const deps = dependencies(1_000_000, tiny);
    const unfit = await recall(deps, request('lru-2', 'Where does Iris volunteer?'));
    assert.equal(unfit.trace?.tier, 'postgres');
    assert.match(unfit.results[0]!.memory.text, /Iris volunteers/);
    await tiny.loading('default', 'lru-2');
    assert.equal(tiny.cachedSize('default', 'lru-2'), undefined, 'never loaded');
    await deps.postgres!.search.indexes.built('default', 'lru-2');
    assert.equal(await bankIndexState(db, 'default', 'lru-2'), 'valid');
  });
});

describe('a keyword that thousands of memories hold', () => {
  it('is answered by the Postgres tier', async () => {
    const db = engine.engine.db;
    const [vector] = await engine.engine.embedder.embed(['a note about the harbour'], 'document');
    // Rows written straight into the table: thousands of embeddings would take the model minutes.
    await db.query(
      `INSERT INTO memories (id, tenant, bank_id, space, type, text, content_hash, fts, embedding, batch_id, seq)
       SELECT gen_random_uuid(), 'default', 'wide', 'default', 'raw', 'harbour note number ' || i, md5(i::text),
              to_tsvector('english', 'harbour note number ' || i), $1::vector, NULL, 0
       FROM generate_series(1, 3000) AS i`,
      [vectorLiteral(vector!)],
    );
    const r = await recall(dependencies(0), request('wide', 'harbour'));
    assert.equal(r.results.length, 100);
    assert.ok(r.results.every((h) => h.memory.text.startsWith('harbour note number')));
  });

  it('is answered by the in-memory arm when more memories hold it than a call can take arguments', () => {
    // More matching rows than the stack allows as spread arguments (about 120,000 here); small vectors keep it light.
    const bank = new BankVectors(4);
    const rows = 200_000;
    const terms = new Map([['harbour', 1]]);
    const vector = [1, 0, 0, 0];
    for (let i = 0; i < rows; i++) {
      bank.upsert(indexRow(`m${i}`, 1, 'harbour'), terms, vector);
    }
    const arms = new IndexArms([bank], () => true);
    const found = arms.keyword(['harbour'], 10);
    assert.equal(found.length, 10);
  });
});
