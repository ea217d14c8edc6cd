// The keyword statistics the writes keep per bank (a bank's size and each term's document frequency, which the
// Postgres tier of recall reads instead of counting rows) stay equal to a count of the rows after every kind of write:
// retains, an edit that changes a memory's text, a delete of one and of a whole bank's memories, a bank deleted and created again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database, Queryable } from '../src/db/database.js';
import { foldBankStatistics } from '../src/vectors/storage/statistics-folder.js';
import { PostgresBankIndex } from '../src/vectors/storage/postgres-index.js';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';

type Counts = Array<{ bank: string; term: string; n: number }>;

/**
 * The statistics as recall reads them: the totals plus the deltas the writes appended since the last fold (migration
 * 013), counts that sum to zero left out.
 */
async function kept(db: Queryable): Promise<Counts> {
  return db.query(
    `SELECT bank, term, sum(n)::int AS n FROM (
       SELECT bank_id AS bank, term, memories AS n FROM bank_term_counts
       UNION ALL SELECT bank_id, coalesce(term, ''), memories FROM bank_statistics_deltas
       UNION ALL SELECT bank_id, '', memory_count FROM banks
     ) s GROUP BY 1, 2 HAVING sum(n) <> 0 ORDER BY 1, 2`,
  );
}

/**
 * The totals alone, once folded: every term row (one that reached zero must be gone: under encryption at rest a
 * plaintext word must not stay behind), and the banks' sizes that are not zero (a bank may be empty).
 */
async function totals(db: Queryable): Promise<Counts> {
  return db.query(
    `SELECT bank_id AS bank, term, memories::int AS n FROM bank_term_counts
     UNION ALL SELECT bank_id, '', memory_count::int FROM banks WHERE memory_count <> 0
     ORDER BY 1, 2`,
  );
}

/** Folds the deltas and checks the totals alone then count the rows, with no delta left. */
async function assertFolded(db: Database, message: string): Promise<void> {
  await foldBankStatistics(db, true);
  assert.deepEqual(await totals(db), await recounted(db), `${message}, folded`);
  const [left] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM bank_statistics_deltas');
  assert.equal(left?.n, 0, `${message}: every delta folded`);
}

/** The same statistics counted from the rows. */
async function recounted(db: Queryable): Promise<Counts> {
  return db.query(
    `SELECT m.bank_id AS bank, u.lexeme AS term, count(*)::int AS n FROM memories m, unnest(m.fts) u GROUP BY 1, 2
     UNION ALL SELECT bank_id, '', count(*)::int FROM memories GROUP BY 1
     ORDER BY 1, 2`,
  );
}

let engine: TestEngine;

before(async () => {
  engine = await startTestEngine();
});

after(async () => {
  await engine.dispose();
});

async function retain(bank: string, texts: string[]): Promise<string[]> {
  const r = await call<{ memory_ids: string[] }>(engine.url, 'POST', `/v1/default/banks/${bank}/memories`, {
    items: texts.map((content) => ({ content })),
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.memory_ids;
}

describe('bank statistics', () => {
  it('equal a count of the rows after retains, an edit, deletes and a bank made again', async () => {
    const db = engine.engine.db;
    const ids = await retain('garden', [
      'Alice planted tomatoes and basil in the garden in May.',
      'Bob waters the tomatoes every evening.',
      'The basil went to seed in August.',
    ]);
    await retain('kitchen', ['Alice cooks tomato soup on Sundays.']);
    await retain('kitchen', ['Bob bakes bread with rosemary.', 'Rosemary grows by the kitchen door.']);
    assert.deepEqual(await kept(db), await recounted(db), 'after retains');
    const search = new PostgresBankIndex(db, engine.engine.store);
    assert.equal(await search.count({ tenant: 'default', bankIds: ['garden', 'kitchen'] }), 6, 'before a fold');
    await assertFolded(db, 'after retains');
    assert.equal(await search.count({ tenant: 'default', bankIds: ['garden', 'kitchen'] }), 6);
    const tomato = await search.documentFrequencies({ tenant: 'default', bankIds: ['garden', 'kitchen'] }, ['tomato']);
    assert.equal(tomato.get('tomato'), 3, 'tomatoes, tomatoes and tomato, in two banks');

    const edited = await call(engine.url, 'PATCH', `/v1/default/banks/garden/memories/${ids[1]}`, {
      text: 'Bob mows the lawn every evening.',
    });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    assert.deepEqual(await kept(db), await recounted(db), 'after an edit of the text');
    assert.equal(
      (await search.documentFrequencies({ tenant: 'default', bankIds: ['garden'] }, ['lawn'])).get('lawn'),
      1,
    );

    const gone = await call(engine.url, 'DELETE', `/v1/default/banks/garden/memories/${ids[2]}`);
    assert.ok(gone.status < 300, JSON.stringify(gone.body));
    const cleared = await call(engine.url, 'DELETE', '/v1/default/banks/kitchen/memories');
    assert.ok(cleared.status < 300, JSON.stringify(cleared.body));
    assert.deepEqual(await kept(db), await recounted(db), 'after deletes');
    await assertFolded(db, 'after an edit and deletes');

    assert.ok((await call(engine.url, 'DELETE', '/v1/default/banks/garden')).status < 300);
    await retain('garden', ['Carol keeps bees beside the garden wall.']);
    assert.deepEqual(await kept(db), await recounted(db), 'after the bank was deleted and made again');
    await assertFolded(db, 'after the bank was deleted and made again');
    const garden = await search.documentFrequencies({ tenant: 'default', bankIds: ['garden'] }, ['tomato', 'bee']);
    assert.deepEqual(
      [...garden],
      [
        ['tomato', 0],
        ['bee', 1],
      ],
    );
  });
});
