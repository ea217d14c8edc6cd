// The bank change log against a real PostgreSQL server: two engines (each its own connection pool, memory store and
// bank index cache) on one database, while a transaction stays open in another database of the same server. This
// server has no pgvector and the path under test only stores vectors and reads them back, so the test database defines
// `vector` as a text domain and pgvector's binary send function over it (TEXT_VECTOR_SQL); every other part (the migrations, triggers, the store's write paths, the cache's
// synchronisation and the tombstone pruning) is the engine's own.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { deleteBank, touchBank } from '../src/memory/bank-store.js';
import { plaintextCodec } from '../src/crypto/codec.js';
import type { Database, SqlParam } from '../src/db/database.js';
import { migrations } from '../src/db/migrations/index.js';
import { openExternalDatabase } from '../src/db/postgres.js';
import { clearMemories, deleteMemory, MemoryStore } from '../src/memory/store.js';
import { PostgresBankIndex } from '../src/vectors/storage/postgres-index.js';
import { foldBankStatistics, StatisticsFolder } from '../src/vectors/storage/statistics-folder.js';
import { pruneTombstones, TombstonePruner } from '../src/vectors/storage/tombstone-pruner.js';
import { VectorCache } from '../src/vectors/vector-cache.js';
import { createScratchDatabase, waitFor, type ScratchDatabase } from './helpers/postgres-server.js';

const DIMENSION = 8;
/**
 * `vector` as a text domain ('[1,2,3]'), and `vector_send` giving pgvector's binary form of it (int16 dimension, int16
 * unused, then the float4s, all big-endian), which the bank copy reads.
 */
const TEXT_VECTOR_SQL = `CREATE DOMAIN vector AS text;
  CREATE FUNCTION vector_send(v vector) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
    SELECT int2send(count(*)::int2) || int2send(0::int2) || string_agg(float4send(x), ''::bytea ORDER BY i)
    FROM unnest(string_to_array(btrim(v, '[]'), ',')::float4[]) WITH ORDINALITY AS u(x, i)
  $$`;
const TENANT = 'default';
let scratch: ScratchDatabase;
let elsewhere: ScratchDatabase;
/** The transaction held open in the other database for the whole file. */
let holder: pg.Client;
const opened: Database[] = [];

interface TestEngine {
  db: Database;
  store: MemoryStore;
  cache: VectorCache;
}

async function openEngine(): Promise<TestEngine> {
  const db = await openExternalDatabase(scratch.url, { poolSize: 4, statementTimeoutMs: 0 });
  opened.push(db);
  const store = new MemoryStore(db, plaintextCodec);
  return { db, store, cache: new VectorCache(store, DIMENSION) };
}

/** A unit vector that differs per text (the cache stores whatever vector it is given). */
function vectorOf(text: string): Float32Array {
  const v = new Float32Array(DIMENSION);
  for (let i = 0; i < text.length; i++) v[i % DIMENSION]! += text.charCodeAt(i);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/**
 * Stores memories as retain does (the bank touched first, all in one transaction); resolves on commit. Each text's
 * content hash is `hashOf` it (by default one of its own, so equal texts are stored twice).
 */
async function write(
  engine: TestEngine,
  bankId: string,
  texts: string[],
  hashOf: (text: string) => string = () => randomUUID(),
): Promise<string[]> {
  const partition = { tenant: TENANT, bankId, space: 'default' };
  const batchId = randomUUID();
  return engine.db.transaction(async (tx) => {
    await touchBank(tx, TENANT, bankId);
    return engine.store.insert(
      tx,
      partition,
      texts.map((text, seq) => ({
        id: randomUUID(),
        type: 'raw',
        text,
        context: null,
        metadata: {},
        tags: [],
        entities: [],
        documentId: null,
        sourceId: null,
        batchId,
        seq,
        contentHash: hashOf(text),
        tokenCount: 3,
        occurredAt: null,
        expiresAt: null,
        embedding: vectorOf(text),
      })),
    );
  });
}

async function recallIds(engine: TestEngine, bankId: string, db: Database = engine.db): Promise<Set<string>> {
  const [bank] = await engine.cache.banks(db, TENANT, [bankId]);
  return new Set(bank!.ids());
}

async function storedIds(bankId: string): Promise<Set<string>> {
  const rows = await scratch.admin<{ id: string }>('SELECT id::text AS id FROM memories WHERE bank_id = $1', [bankId]);
  return new Set(rows.map((r) => r.id));
}

/** How many of the scratch database's connections wait on a lock now. */
async function lockWaiters(): Promise<number> {
  const [row] = await scratch.admin<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
  );
  return row!.n;
}

/**
 * Stores one memory the way another writer's session would, straight into the table (its triggers do the rest), in
 * `client`'s open transaction; answers its id.
 */
async function insertAs(
  client: pg.Client,
  bankId: string,
  text: string,
  contentHash: string = randomUUID(),
): Promise<string> {
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO memories (id, tenant, bank_id, space, type, text, content_hash, fts, embedding)
     VALUES ($1, $2, $3, 'default', 'raw', $4, $5, to_tsvector('english', $4), $6) RETURNING id::text AS id`,
    [randomUUID(), TENANT, bankId, text, contentHash, `[${Array.from(vectorOf(text)).join(',')}]`],
  );
  return rows[0]!.id;
}

async function bankLog(bankId: string): Promise<{ seq: number; pruned: number }> {
  const [row] = await scratch.admin<{ seq: string; pruned: string }>(
    'SELECT change_seq AS seq, tombstones_pruned_to AS pruned FROM banks WHERE tenant = $1 AND bank_id = $2',
    [TENANT, bankId],
  );
  return { seq: Number(row!.seq), pruned: Number(row!.pruned) };
}

/** The same database, with how many changed memories and tombstones each synchronisation query answered. */
function counting(db: Database): { db: Database; reads: Array<{ rows: number; gone: number }> } {
  const reads: Array<{ rows: number; gone: number }> = [];
  const wrapped = Object.create(db, {
    query: {
      value: async (sql: string, params?: readonly SqlParam[]) => {
        const rows = await db.query<{ kind?: string }>(sql, params);
        if (sql.startsWith("(SELECT 'row' AS kind")) {
          reads.push({
            rows: rows.filter((r) => r.kind === 'row').length,
            gone: rows.filter((r) => r.kind === 'gone').length,
          });
        }
        return rows;
      },
    },
  }) as Database;
  return { db: wrapped, reads };
}

before(async () => {
  scratch = await createScratchDatabase('mnemos_changelog');
  elsewhere = await createScratchDatabase('mnemos_changelog_other');
  await scratch.admin(TEXT_VECTOR_SQL);
  for (const m of migrations) await scratch.admin(m.sql);
  await scratch.admin('ALTER TABLE memories ADD COLUMN embedding vector');
  // A long write transaction in another database of the same server: it has a transaction id and stays open.
  holder = new pg.Client({ connectionString: elsewhere.url });
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query('CREATE TABLE held (x int); INSERT INTO held VALUES (1)');
});

after(async () => {
  await holder?.query('ROLLBACK').catch(() => undefined);
  await holder?.end().catch(() => undefined);
  for (const db of opened) await db.close().catch(() => undefined);
  await elsewhere?.drop();
  await scratch?.drop();
});

/** Runs a background job on its schedule until `done`, stops it, and answers the errors it reported. */
async function runScheduled(
  make: (onError: (error: unknown) => void) => { start(): void; stop(): Promise<void> },
  what: string,
  done: () => Promise<boolean>,
): Promise<unknown[]> {
  const errors: unknown[] = [];
  const job = make((error) => errors.push(error));
  job.start();
  try {
    await waitFor(what, done);
  } finally {
    await job.stop();
  }
  return errors;
}

async function holderStillOpen(): Promise<boolean> {
  const rows = await scratch.admin<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND state = 'idle in transaction'`,
    [new URL(elsewhere.url).pathname.slice(1)],
  );
  return rows[0]!.n === 1;
}

describe('the bank change log, two engines, a transaction held open in another database', () => {
  it('writes take the bank`s open number, once per transaction, stamped on rows and tombstones; a read closes it', async () => {
    const a = await openEngine();
    const stampOf = async (id: string) =>
      Number(
        (await scratch.admin<{ seq: string }>('SELECT change_seq AS seq FROM memories WHERE id = $1', [id]))[0]!.seq,
      );
    const ids = await write(a, 'numbers', ['one', 'two', 'three']);
    const closed = (await bankLog('numbers')).seq;
    const stamped = await scratch.admin<{ seq: string }>(
      'SELECT DISTINCT change_seq AS seq FROM memories WHERE bank_id = $1',
      ['numbers'],
    );
    assert.deepEqual(
      stamped.map((r) => Number(r.seq)),
      [closed + 1],
      'a retain of three memories takes one number, the one after the bank`s closed number',
    );
    // No read in between: the edit is a change of the same open number, and the bank's number stays closed.
    await a.store.update(TENANT, 'numbers', ids[2]!, { tags: ['first edit'] });
    assert.equal(await stampOf(ids[2]!), closed + 1);
    assert.equal((await bankLog('numbers')).seq, closed);

    // A read closes the open number (no writer is in flight), so each later write takes the next one.
    await recallIds(a, 'numbers');
    assert.equal((await bankLog('numbers')).seq, closed + 1);
    await a.store.update(TENANT, 'numbers', ids[0]!, { tags: ['edited'] });
    assert.equal(await stampOf(ids[0]!), closed + 2);
    await recallIds(a, 'numbers');
    assert.equal(await deleteMemory(a.db, TENANT, 'numbers', ids[1]!), 1);
    await recallIds(a, 'numbers');
    assert.equal(await clearMemories(a.db, TENANT, 'numbers', undefined, undefined), 2);
    await recallIds(a, 'numbers');
    assert.equal((await bankLog('numbers')).seq, closed + 4);
    const tombstones = await scratch.admin<{ id: string; seq: string }>(
      'SELECT id::text AS id, change_seq AS seq FROM memory_tombstones WHERE bank_id = $1 ORDER BY change_seq',
      ['numbers'],
    );
    assert.deepEqual(
      tombstones.map((t) => Number(t.seq)),
      [closed + 3, closed + 4, closed + 4],
    );
    assert.equal(tombstones[0]!.id, ids[1]);
  });

  it('a write acknowledged on one engine is in the next recall on the other, reading only what changed', async () => {
    const a = await openEngine();
    const b = await openEngine();
    const seen = counting(b.db);
    await write(a, 'shared', ['seed memory']);
    assert.ok((await recallIds(b, 'shared', seen.db)).size === 1);
    const written: string[] = [];
    for (let i = 0; i < 24; i++) {
      const [id] = await write(a, 'shared', [`fresh memory number ${i}`]);
      written.push(id!);
      seen.reads.length = 0;
      const ids = await recallIds(b, 'shared', seen.db);
      assert.ok(ids.has(id!), `write ${i} acknowledged on engine A is in engine B's next recall`);
      // Only the one new memory is read: the transaction held open elsewhere holds nothing back.
      assert.deepEqual(seen.reads, [{ rows: 1, gone: 0 }]);
      if (i % 4 === 3) {
        const doomed = written[i - 1]!;
        assert.equal(await deleteMemory(a.db, TENANT, 'shared', doomed), 1);
        seen.reads.length = 0;
        assert.ok(!(await recallIds(b, 'shared', seen.db)).has(doomed), 'a deleted memory is never recalled again');
        assert.deepEqual(seen.reads, [{ rows: 0, gone: 1 }]);
      }
    }
    assert.deepEqual(await recallIds(b, 'shared'), await storedIds('shared'));
    assert.ok(await holderStillOpen(), 'the other database`s transaction stayed open throughout');
  });

  it('a recall issued after a write never reuses a synchronisation that read the database before it', async () => {
    const a = await openEngine();
    const b = await openEngine();
    await write(a, 'inflight', ['before the race']);
    await recallIds(b, 'inflight');
    // Engine B's synchronisation reads the bank's log (finding nothing new), then stalls there until released.
    let reached!: () => void;
    const stalled = new Promise<void>((resolve) => (reached = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let first = true;
    const gated = Object.create(b.db, {
      query: {
        value: async (sql: string, params?: readonly SqlParam[]) => {
          const rows = await b.db.query(sql, params);
          if (first && sql.includes('mnemos_bank_close')) {
            first = false;
            reached();
            await gate;
          }
          return rows;
        },
      },
    }) as Database;
    const early = recallIds(b, 'inflight', gated);
    await stalled;
    const [id] = await write(a, 'inflight', ['written while a synchronisation was in flight']);
    const late = recallIds(b, 'inflight', gated);
    release();
    assert.ok(!(await early).has(id!), 'the synchronisation that read before the write does not have it');
    assert.ok((await late).has(id!), 'the recall issued after the acknowledgement sees the write');
  });

  it('with recalls always running, a recall issued after a write or delete is acknowledged has it', async () => {
    const a = await openEngine();
    const b = await openEngine();
    await write(a, 'busy', ['seed memory']);
    // Engine B synchronises the bank over and over, so a synchronisation is nearly always in flight.
    let running = true;
    const background = (async () => {
      while (running) await recallIds(b, 'busy');
    })();
    try {
      const written = await Promise.all(
        Array.from({ length: 30 }, async (_, i) => {
          const [id] = await write(a, 'busy', [`busy memory ${i}`]);
          return { id: id!, seen: (await recallIds(b, 'busy')).has(id!) };
        }),
      );
      assert.deepEqual(
        written.filter((w) => !w.seen),
        [],
      );
      const deleted = await Promise.all(
        written.slice(0, 15).map(async ({ id }) => {
          await deleteMemory(a.db, TENANT, 'busy', id);
          return { id, returned: (await recallIds(b, 'busy')).has(id) };
        }),
      );
      assert.deepEqual(
        deleted.filter((d) => d.returned),
        [],
      );
    } finally {
      running = false;
      await background;
    }
  });

  it('a second writer into the bank does not wait for the first; readers do not pass the open one`s number', async () => {
    const a = await openEngine();
    const b = await openEngine();
    await write(a, 'ordered', ['first memory']);
    await recallIds(b, 'ordered');
    const slow = new pg.Client({ connectionString: scratch.url });
    await slow.connect();
    try {
      await slow.query('BEGIN');
      const [taken] = (await slow.query<{ n: string }>(`SELECT mnemos_bank_change('default', 'ordered', true) AS n`))
        .rows;
      // A second writer on engine A writes into the bank while the first writer is open.
      let committed = false;
      const second = write(a, 'ordered', ['second writer']).then((ids) => {
        committed = true;
        return ids;
      });
      await waitFor(
        'the second writer to commit or to wait on a lock',
        async () => committed || (await lockWaiters()) > 0,
      );
      assert.equal(await lockWaiters(), 0, 'the second writer does not wait for the first');
      const [secondId] = await second;
      const [secondRow] = await scratch.admin<{ seq: string }>('SELECT change_seq AS seq FROM memories WHERE id = $1', [
        secondId!,
      ]);
      assert.equal(Number(secondRow!.seq), Number(taken!.n), 'both writers take the bank`s open number');

      // Engine B sees the committed write at once, and keeps its place before the open writer's number; after
      // finding the writer open several times running, a read waits a moment for it, and answers all the same.
      for (let read = 0; read < 6; read++) {
        const [during] = await b.cache.banks(b.db, TENANT, ['ordered']);
        assert.ok(during!.get(secondId!));
        assert.ok(during!.changeSeq < Number(taken!.n), 'a reader does not pass an open writer`s number');
      }
      assert.equal((await bankLog('ordered')).seq, Number(taken!.n) - 1, 'nor is the bank`s number closed past it');

      const firstId = await insertAs(slow, 'ordered', 'first writer');
      assert.ok(!(await recallIds(b, 'ordered')).has(firstId), 'nothing uncommitted is read');
      await slow.query('COMMIT');
      // The first writer committed after the second, under the same number: the next read still has it.
      assert.ok((await recallIds(b, 'ordered')).has(firstId));
      assert.deepEqual(await recallIds(b, 'ordered'), await storedIds('ordered'));
    } finally {
      await slow.query('ROLLBACK').catch(() => undefined);
      await slow.end();
    }
  });

  it('closing a bank`s number reads its change-number index, not its rows, however often it is called', async () => {
    const a = await openEngine();
    await write(a, 'closing', ['first']);
    // Thousands of rows in the bank, under numbers all closed: a close finds nothing newer than the closed number.
    await scratch.admin(
      `INSERT INTO memories (id, tenant, bank_id, space, type, text, content_hash, fts, embedding)
       SELECT gen_random_uuid(), $1, 'closing', 'default', 'raw', 'memory ' || n, md5(n::text), to_tsvector('english', 'memory ' || n), NULL
       FROM generate_series(1, 8000) n`,
      [TENANT],
    );
    await recallIds(a, 'closing');
    await scratch.admin('ANALYZE memories');
    const client = new pg.Client({ connectionString: scratch.url });
    await client.connect();
    try {
      // The function's statements are planned once per session and, from the sixth call, by a plan made for any number.
      for (let i = 0; i < 8; i++) await client.query('SELECT * FROM mnemos_bank_close($1, $2, 0)', [TENANT, 'closing']);
      const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: Record<string, number> }> }>(
        "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT * FROM mnemos_bank_close($1, 'closing', 0)",
        [TENANT],
      );
      const plan = rows[0]!['QUERY PLAN'][0]!.Plan;
      const blocks = (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0);
      const [size] = await scratch.admin<{ pages: number }>(
        `SELECT (sum(pg_relation_size(relid)) / current_setting('block_size')::int)::int AS pages
         FROM pg_partition_tree('memories')`,
      );
      assert.ok(size!.pages > 200, `the bank's rows fill ${size!.pages} pages`);
      assert.ok(blocks < 40, `a close read ${blocks} blocks; the bank's rows fill ${size!.pages} pages`);
    } finally {
      await client.end();
    }
  });

  it('writers storing the same contents in opposite orders do not deadlock: each stores them in one order', async () => {
    const a = await openEngine();
    await write(a, 'twice', ['made']);
    const first = new pg.Client({ connectionString: scratch.url });
    await first.connect();
    try {
      // The first writer stores "h-a" and stays open; the second is given "h-b" then "h-a".
      await first.query('BEGIN');
      const storedA = await insertAs(first, 'twice', 'h-a', 'h-a');
      const second = write(a, 'twice', ['h-b', 'h-a'], (text) => text);
      await waitFor('the second writer to wait on the first', async () => (await lockWaiters()) > 0);
      // Had the second stored "h-b" before waiting on "h-a", this would wait on it, and the database would end one of
      // the two as deadlocked.
      const storedB = await insertAs(first, 'twice', 'h-b', 'h-b');
      await first.query('COMMIT');
      assert.deepEqual(await second, [storedB, storedA], 'the second answers what the first stored');
    } finally {
      await first.query('ROLLBACK').catch(() => undefined);
      await first.end();
    }
  });

  it('a writer leaves the bank`s keyword counts unlocked while it is open; readers count its rows once committed', async () => {
    const a = await openEngine();
    await write(a, 'counted', ['tomatoes in the garden']);
    await foldBankStatistics(a.db, true);
    const scope = { tenant: TENANT, bankIds: ['counted'] };
    const search = new PostgresBankIndex(a.db, a.store);
    const open = new pg.Client({ connectionString: scratch.url });
    await open.connect();
    try {
      await open.query('BEGIN');
      await insertAs(open, 'counted', 'tomatoes by the door');
      // Another writer of the bank counting the same word would take this row: nothing holds it.
      const free = await scratch.admin<{ term: string }>(
        `SELECT term FROM bank_term_counts WHERE bank_id = 'counted' AND term = 'tomato' FOR UPDATE NOWAIT`,
      );
      assert.deepEqual(free, [{ term: 'tomato' }]);
      /** The bank's size and the two words' counts, as recall reads them, in one string. */
      const counted = async () => {
        const { size, frequencies } = await search.statistics(scope, ['tomato', 'door']);
        return `size ${size}, tomato ${frequencies.get('tomato')}, door ${frequencies.get('door')}`;
      };
      assert.equal(await counted(), 'size 1, tomato 1, door 0', 'uncommitted');
      await open.query('COMMIT');
      assert.equal(await counted(), 'size 2, tomato 2, door 1', 'committed');
      assert.ok((await foldBankStatistics(a.db)) > 0, 'the committed deltas fold');
      assert.equal(await counted(), 'size 2, tomato 2, door 1', 'folded');
    } finally {
      await open.query('ROLLBACK').catch(() => undefined);
      await open.end();
    }
  });

  it('prunes tombstones, and an engine behind the pruned ones still drops every deleted memory', async () => {
    const a = await openEngine();
    const behind = await openEngine();
    const ids = await write(
      a,
      'pruned',
      Array.from({ length: 12 }, (_, i) => `memory ${i} of a bank that loses some`),
    );
    const [copy] = await behind.cache.banks(behind.db, TENANT, ['pruned']);
    assert.equal(copy!.size, 12);
    for (const id of ids.slice(0, 5)) await deleteMemory(a.db, TENANT, 'pruned', id);
    const [added] = await write(a, 'pruned', ['a memory written after the deletions']);
    await a.store.update(TENANT, 'pruned', ids[6]!, { tags: ['kept'] });

    assert.equal(await pruneTombstones(a.db, 3_600_000), 0, 'tombstones younger than the retention stay');
    let removed = 0;
    for (let step; (step = await pruneTombstones(a.db, 0, 2)) > 0;) removed += step;
    assert.ok(removed >= 5, `removed ${removed} tombstones`);
    const left = await scratch.admin('SELECT 1 FROM memory_tombstones WHERE bank_id = $1', ['pruned']);
    assert.equal(left.length, 0);
    const log = await bankLog('pruned');
    assert.ok(log.pruned > copy!.changeSeq, 'the bank records how far its tombstones were pruned');

    const [caughtUp] = await behind.cache.banks(behind.db, TENANT, ['pruned']);
    assert.deepEqual(new Set(caughtUp!.ids()), await storedIds('pruned'));
    for (const id of ids.slice(0, 5)) assert.equal(caughtUp!.get(id), undefined);
    assert.ok(caughtUp!.get(added!));
    assert.deepEqual(caughtUp!.get(ids[6]!)?.tags, ['kept']);
    assert.equal(caughtUp!.changeSeq, log.seq);
  });

  it('prunes on a schedule in the background, and stops when asked', async () => {
    const a = await openEngine();
    const ids = await write(a, 'scheduled', ['to be deleted', 'to stay']);
    await deleteMemory(a.db, TENANT, 'scheduled', ids[0]!);
    const errors = await runScheduled(
      (onError) => new TombstonePruner(a.db, onError, { everyMs: 20, retentionMs: 0 }),
      'the scheduled pruning',
      async () =>
        (await scratch.admin('SELECT 1 FROM memory_tombstones WHERE bank_id = $1', ['scheduled'])).length === 0,
    );
    assert.deepEqual(errors, []);
    assert.ok((await bankLog('scheduled')).pruned > 0);
  });

  it('folds the keyword counts on a schedule in the background', async () => {
    const a = await openEngine();
    await write(a, 'folded', ['apples and pears', 'pears alone']);
    const errors = await runScheduled(
      (onError) => new StatisticsFolder(a.db, onError, 20),
      'the scheduled fold',
      async () =>
        (await scratch.admin('SELECT 1 FROM bank_statistics_deltas WHERE bank_id = $1', ['folded'])).length === 0,
    );
    assert.deepEqual(errors, []);
    const totals = await scratch.admin<{ n: string }>(
      `SELECT term || ' ' || memories AS n FROM bank_term_counts WHERE bank_id = 'folded'
       UNION ALL SELECT 'size ' || memory_count FROM banks WHERE bank_id = 'folded' ORDER BY 1`,
    );
    assert.deepEqual(
      totals.map((t) => t.n),
      ['alon 1', 'appl 1', 'pear 2', 'size 2'],
    );
  });

  it("a memory's names are stored with it; one pre-empted by the same content stored first gets none", async () => {
    const a = await openEngine();
    const text = 'Caroline met Melanie in Boston';
    const [first] = await write(a, 'named', [text], (t) => t);
    // The second write's row loses to the first on the content hash, as a concurrent retain of the same content does:
    // its id is not stored, so neither are names under it (the entities table's key on memories would refuse them).
    const [second] = await write(a, 'named', [text], (t) => t);
    assert.equal(second, first, 'the content already stored answers with its id');
    const names = await scratch.admin<{ memory_id: string; key: string }>(
      'SELECT memory_id::text AS memory_id, key FROM memory_entities WHERE bank_id = $1 ORDER BY key',
      ['named'],
    );
    assert.deepEqual(
      names.map((n) => n.key),
      ['boston', 'caroline', 'melanie'],
    );
    assert.ok(names.every((n) => n.memory_id === first));
  });

  it('a bank deleted and created again is read afresh, though its numbers start over', async () => {
    const a = await openEngine();
    const b = await openEngine();
    const old = await write(a, 'reborn', ['one', 'two', 'three', 'four']);
    await a.store.update(TENANT, 'reborn', old[0]!, { tags: ['x'] });
    const [before] = await b.cache.banks(b.db, TENANT, ['reborn']);
    const oldSeq = before!.changeSeq;
    await a.db.transaction((tx) => deleteBank(tx, TENANT, 'reborn'));
    assert.equal((await recallIds(b, 'reborn')).size, 0, 'a deleted bank recalls nothing');
    const left = await scratch.admin('SELECT 1 FROM memory_tombstones WHERE bank_id = $1', ['reborn']);
    assert.equal(left.length, 0, 'a deleted bank leaves no tombstones');
    const [fresh] = await write(a, 'reborn', ['a memory of the new bank']);
    assert.ok((await bankLog('reborn')).seq < oldSeq, 'the new bank counts from the start');
    assert.deepEqual(await recallIds(b, 'reborn'), new Set([fresh!]));
  });

  it('migrates a database with memories and tombstones in place: old rows load, later changes sync', async () => {
    const legacy = await createScratchDatabase('mnemos_changelog_legacy');
    const db = await openExternalDatabase(legacy.url, { poolSize: 2, statementTimeoutMs: 0 });
    opened.push(db);
    try {
      await legacy.admin(TEXT_VECTOR_SQL);
      for (const m of migrations.filter((m) => m.version < 5)) await legacy.admin(m.sql);
      await legacy.admin('ALTER TABLE memories ADD COLUMN embedding vector');
      const insert = `INSERT INTO memories (id, tenant, bank_id, space, type, text, content_hash, fts, embedding)
        VALUES ($1, 'default', $2, 'default', 'raw', $3, $4, to_tsvector($3), $5)`;
      const store = async (bankId: string, id: string, text: string) =>
        legacy.admin(insert, [id, bankId, text, randomUUID(), `[${Array.from(vectorOf(text)).join(',')}]`]);
      const ids = [randomUUID(), randomUUID(), randomUUID()];
      await legacy.admin(`INSERT INTO banks (tenant, bank_id, name) VALUES ('default', 'old', 'old')`);
      for (const [i, id] of ids.entries()) await store('old', id, `legacy memory ${i}`);
      // Memories whose bank has no row (banks are implicit): the migration gives the bank its row and log.
      const orphan = randomUUID();
      await store('orphan', orphan, 'a memory of a bank without a row');
      await legacy.admin('DELETE FROM memories WHERE id = $1', [ids[2]]);
      assert.equal((await legacy.admin('SELECT 1 FROM memory_tombstones')).length, 1);

      await legacy.admin(migrations.find((m) => m.version === 5)!.sql);
      assert.equal((await legacy.admin('SELECT 1 FROM memory_tombstones')).length, 0, 'old tombstones go');
      // The later migrations too: today's store reads their columns.
      for (const m of migrations.filter((m) => m.version > 5)) await legacy.admin(m.sql);
      const memories = new MemoryStore(db, plaintextCodec);
      const engine = { db, store: memories, cache: new VectorCache(memories, DIMENSION) };
      assert.deepEqual(await recallIds(engine, 'old'), new Set(ids.slice(0, 2)), 'existing rows load as change 0');
      assert.deepEqual(await recallIds(engine, 'orphan'), new Set([orphan]));
      await deleteMemory(db, TENANT, 'old', ids[0]!);
      const [added] = await write(engine, 'old', ['written after the migration']);
      assert.deepEqual(await recallIds(engine, 'old'), new Set([ids[1]!, added!]));
    } finally {
      await db.close();
      opened.splice(opened.indexOf(db), 1);
      await legacy.drop();
    }
  });
});
