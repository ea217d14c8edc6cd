import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createBankPartition, moveBankRows } from '../src/db/bank-partition.js';
import { bankIndexName } from '../src/db/migrations/007_recall_index.js';
import { bankIndexState, ensureBankIndex } from '../src/db/recall-index.js';
import { vectorLiteral } from '../src/memory/vector-literal.js';
import { BANK_PART } from '../src/vectors/storage/postgres-index.js';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';
import { createScratchDatabase, waitFor, type ScratchDatabase } from './helpers/postgres-server.js';
import { items } from './helpers/recall-facts.js';

/**
 * On a server, a bank whose vector index is built is first moved into a partition of `memories` of its own, so the
 * build reads its rows alone. The move changes no memory: every row keeps its change number and history, no keyword
 * count or tombstone is written, and the entities follow their memories. Retains into the bank afterwards, and one
 * that waited for the move, write its partition; recall answers as before.
 */

const TEXTS = [
  'Mara moved to Lisbon in March to start a job at a bakery.',
  'The bakery opens at six; Mara bakes before the customers arrive.',
  'Mara adopted a grey cat called Figo.',
  'Figo sleeps on the flour sacks in the storeroom.',
  'Tomas repairs bicycles in a workshop near the river.',
];

interface RowState {
  id: string;
  change_seq: string;
  updated_at: string;
  partition: string;
}

describe('a bank moved into a partition of its own (real server)', () => {
  let scratch: ScratchDatabase;
  let engine: TestEngine;

  const retain = async (bankId: string, texts: string[]): Promise<string[]> => {
    const outcome = await engine.engine.service.retain({
      partition: { tenant: 'default', bankId, space: 'default' },
      items: items(texts),
      async: false,
      maxNewMemories: undefined,
    });
    return outcome.async ? [] : outcome.memoryIds;
  };
  const rows = (bankId: string): Promise<RowState[]> =>
    engine.engine.db.query<RowState>(
      `SELECT id, change_seq::text, updated_at::text, tableoid::regclass::text AS partition
       FROM memories WHERE tenant = 'default' AND bank_id = $1 ORDER BY id`,
      [bankId],
    );
  const count = async (sql: string, bankId: string): Promise<number> =>
    (await engine.engine.db.query<{ n: number }>(sql, ['default', bankId]))[0]?.n ?? -1;
  /** What the triggers write for a bank: its history versions, keyword-count deltas and tombstones, and its number. */
  const recorded = async (
    bankId: string,
  ): Promise<{ history: number; deltas: number; tombstones: number; changeSeq: number }> => ({
    history: await count('SELECT count(*)::int AS n FROM memory_history WHERE tenant = $1 AND bank_id = $2', bankId),
    deltas: await count(
      'SELECT count(*)::int AS n FROM bank_statistics_deltas WHERE tenant = $1 AND bank_id = $2',
      bankId,
    ),
    tombstones: await count(
      'SELECT count(*)::int AS n FROM memory_tombstones WHERE tenant = $1 AND bank_id = $2',
      bankId,
    ),
    changeSeq: await count('SELECT change_seq::int AS n FROM banks WHERE tenant = $1 AND bank_id = $2', bankId),
  });
  const entities = (bankId: string): Promise<Array<{ memory_id: string; key: string; part: number }>> =>
    engine.engine.db.query(
      `SELECT memory_id::text, key, part FROM memory_entities WHERE tenant = 'default' AND bank_id = $1
       ORDER BY memory_id, key, kind`,
      [bankId],
    );
  const bankPart = async (bankId: string): Promise<number> =>
    count('SELECT part AS n FROM banks WHERE tenant = $1 AND bank_id = $2', bankId);
  const recallIds = async (bankId: string, query: string): Promise<string[]> => {
    const r = await call<{ results: Array<{ id: string }> }>(
      engine.url,
      'POST',
      `/v1/default/banks/${bankId}/memories/recall`,
      { query },
    );
    assert.equal(r.status, 200);
    return r.body.results.map((h) => h.id);
  };
  const indexTable = async (bankId: string): Promise<string | undefined> =>
    (
      await engine.engine.db.query<{ table: string }>(
        `SELECT i.indrelid::regclass::text AS table FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
         WHERE c.relname = $1`,
        [bankIndexName('default', bankId)],
      )
    )[0]?.table;

  before(async () => {
    scratch = await createScratchDatabase('mnemos_bank_partition');
    engine = await startTestEngine({ MNEMOS_API_DATABASE_URL: scratch.url });
    await retain('big', TEXTS);
    await retain('small', TEXTS.slice(0, 2));
  });
  after(async () => {
    await engine?.dispose();
    await scratch?.drop();
  });

  it('moves the bank`s rows and their entities without recording a change, and builds its index there', async () => {
    // A recall first: it closes the bank's open number (migration 014), which is the reader's change, not the move's.
    const answered = await recallIds('big', 'Where does Mara work?');
    const before = { rows: await rows('big'), recorded: await recorded('big'), entities: await entities('big') };
    assert.ok(before.entities.length > 0, 'the bank`s memories name entities');
    assert.ok(before.rows.every((r) => r.partition === 'memories_shared'));

    assert.equal(await ensureBankIndex(engine.engine.db, 'default', 'big'), 'built');

    const part = await bankPart('big');
    assert.ok(part > 0, 'the bank has a partition number of its own');
    const table = `memories_bank_${part}`;
    assert.deepEqual(
      await rows('big'),
      before.rows.map((r) => ({ ...r, partition: table })),
      'every row is in the bank`s partition, with its change number and times as they were',
    );
    assert.deepEqual(await recorded('big'), before.recorded, 'no history, keyword count, tombstone or number');
    assert.deepEqual(
      await entities('big'),
      before.entities.map((e) => ({ ...e, part })),
      'the entities follow their memories',
    );
    assert.ok(
      (await rows('small')).every((r) => r.partition === 'memories_shared'),
      'the other bank stays',
    );
    assert.equal(await bankPart('small'), 0);
    assert.equal(await indexTable('big'), table, 'the index is built on the bank`s partition, from its rows alone');
    // What each index is on its table: its method, columns and predicate.
    const indexes = async (of: string): Promise<Array<{ name: string; what: string }>> =>
      engine.engine.db.query(
        `SELECT c.relname AS name, regexp_replace(pg_get_indexdef(c.oid), '^.* ON \\S+ ', '') AS what
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = $1::regclass`,
        [of],
      );
    const own = new Set((await indexes(table)).map((i) => i.what));
    const shared = (await indexes('memories_shared')).filter(
      (i) => !i.name.startsWith('memories_hnsw_') && i.name !== 'memories_tenant_id',
    );
    assert.ok(
      shared.some((i) => i.what.startsWith('USING gin')),
      'the shared partition has its keyword index',
    );
    assert.deepEqual(
      shared.filter((i) => !own.has(i.what)).map((i) => i.name),
      [],
      'the bank`s partition has every index the shared one has (but the other banks` vector indexes)',
    );
    assert.equal(await bankIndexState(engine.engine.db, 'default', 'big'), 'valid');
    // The planner's figures of both partitions are brought up to date (or it would take the bank's rows to be still in
    // the shared partition, and read it for every recall of the bank).
    const analyzed = await engine.engine.db.query<{ name: string }>(
      `SELECT relname AS name FROM pg_stat_user_tables WHERE last_analyze IS NOT NULL AND relname IN ('memories_shared', $1)
       ORDER BY relname`,
      [table],
    );
    assert.deepEqual(
      analyzed.map((r) => r.name),
      [table, 'memories_shared'].sort(),
    );
    // A search for another bank never reads this bank's index, even with every other plan priced out: the planner
    // reads every partition, and would search the index in full, finding nothing of the other bank in it.
    const [query] = await engine.engine.embedder.embed(['a cat'], 'query');
    const plan = await engine.engine.db.transaction(async (tx) => {
      for (const off of ['enable_seqscan', 'enable_bitmapscan', 'enable_sort'])
        await tx.query(`SELECT set_config('${off}', 'off', true)`);
      return tx.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT m.id FROM ${table} m WHERE m.tenant = $1 AND m.bank_id = $2 AND m.embedding IS NOT NULL
         ORDER BY m.embedding <=> $3::vector LIMIT 10`,
        ['default', 'small', vectorLiteral(query!)],
      );
    });
    assert.doesNotMatch(plan.map((r) => r['QUERY PLAN']).join('\n'), new RegExp(bankIndexName('default', 'big')));
    // The Postgres tier's reads of one bank name its partition, from the bank's row: the others are never read.
    const read = await engine.engine.db.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, COSTS OFF) SELECT m.id FROM memories m WHERE m.tenant = $1 AND m.bank_id = $2 AND ${BANK_PART}`,
      ['default', 'big'],
    );
    const scans = read.map((r) => r['QUERY PLAN']).filter((line) => / on memories_/.test(line));
    assert.ok(scans.some((line) => line.includes(`on ${table} `) && !line.includes('never executed')));
    assert.ok(
      scans.filter((line) => line.includes('on memories_shared ')).every((line) => line.includes('never executed')),
      scans.join('\n'),
    );
    assert.equal(await ensureBankIndex(engine.engine.db, 'default', 'big'), 'present');
    assert.deepEqual(await recallIds('big', 'Where does Mara work?'), answered, 'recall answers as before');
  });

  it('writes later retains into the bank`s partition, and records their changes and deletions again', async () => {
    const part = await bankPart('big');
    const before = await recorded('big');
    const [id] = await retain('big', ['Figo caught a mouse in the bakery yesterday.']);
    const [other] = await retain('small', ['Figo caught a mouse in the bakery yesterday.']);
    const placed = async (memoryId: string | undefined): Promise<string | undefined> =>
      (
        await engine.engine.db.query<{ partition: string }>(
          'SELECT tableoid::regclass::text AS partition FROM memories WHERE id = $1',
          [memoryId ?? null],
        )
      )[0]?.partition;
    assert.equal(await placed(id), `memories_bank_${part}`);
    assert.equal(await placed(other), 'memories_shared');
    assert.ok((await entities('big')).filter((e) => e.memory_id === id).every((e) => e.part === part));
    assert.ok(await recallIds('big', 'What did the cat catch?').then((ids) => ids.includes(id!)));

    const deleted = await call(engine.url, 'DELETE', `/v1/default/banks/big/memories/${id}`);
    assert.equal(deleted.status, 200);
    const after = await recorded('big');
    assert.ok(after.history > before.history, 'the retain is in the history');
    assert.ok(after.deltas > before.deltas, 'its keywords are counted');
    assert.equal(after.tombstones, before.tombstones + 1, 'its deletion leaves a tombstone');
  });

  it('a retain that waits for the move writes the bank`s new partition; other banks go on meanwhile', async () => {
    await retain('waiting', TEXTS.slice(0, 2));
    const db = engine.engine.db;
    const made = await createBankPartition(db);
    let waiting: Promise<string[]> | undefined;
    const part = await db.transaction(async (tx) => {
      const moved = await moveBankRows(tx, 'default', 'waiting', made);
      waiting = retain('waiting', ['Tomas opened a second workshop by the station.']);
      // The retain is held on the bank's row until the move commits.
      await waitFor('the retain to wait for the move', async () => {
        const held = await scratch.admin<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`,
        );
        return (held[0]?.n ?? 0) > 0;
      });
      // The move holds no lock of the table: another bank is read and written meanwhile (a lock on the table would
      // hold the read until the move commits, and it would time out).
      const [read] = await scratch.admin<{ n: number }>(
        `SELECT count(*)::int AS n FROM memories WHERE tenant = 'default' AND bank_id = 'small'`,
      );
      assert.ok((read?.n ?? 0) > 0);
      const [other] = await retain('small', ['Tomas closed the workshop early on Friday.']);
      assert.ok(other !== undefined);
      return moved;
    });
    assert.equal(part, made);
    const [id] = await waiting!;
    const [row] = await db.query<{ partition: string }>(
      'SELECT tableoid::regclass::text AS partition FROM memories WHERE id = $1',
      [id ?? null],
    );
    assert.equal(row?.partition, `memories_bank_${part}`);
    assert.equal((await rows('waiting')).length, 3);
  });

  it('a bank deleted and made again is moved again, its index built on its new partition', async () => {
    const first = await bankPart('big');
    assert.equal((await call(engine.url, 'DELETE', '/v1/default/banks/big')).status, 200);
    await retain('big', TEXTS);
    assert.equal(await bankPart('big'), 0, 'the bank made again starts in the shared partition');
    assert.equal(await bankIndexState(engine.engine.db, 'default', 'big'), 'invalid', 'the old index is not its');

    assert.equal(await ensureBankIndex(engine.engine.db, 'default', 'big'), 'built');
    const second = await bankPart('big');
    assert.notEqual(second, first);
    assert.equal(await indexTable('big'), `memories_bank_${second}`);
    assert.ok((await rows('big')).every((r) => r.partition === `memories_bank_${second}`));
    const [cat] = await engine.engine.db.query<{ id: string }>(
      `SELECT id FROM memories WHERE bank_id = 'big' AND text LIKE 'Mara adopted%'`,
    );
    assert.ok((await recallIds('big', 'Who has a cat?')).includes(cat!.id), 'recall finds the bank`s memories');
  });
});
