import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { join } from 'node:path';
import type { Database, Queryable, SqlParam } from '../src/db/database.js';
import { openEmbeddedDatabase } from '../src/db/pglite.js';
import { tsqueryTerms } from '../src/keywords/tsvector.js';
import { queryTerms } from '../src/keywords/text-search.js';
import { LexemeCache } from '../src/keywords/lexemes.js';
import { tempHome } from './helpers/engine.js';

/** Counts the statements a Queryable is asked to run. */
function counting(db: Database): { q: Queryable; calls: () => number } {
  let n = 0;
  return {
    q: {
      query: <T extends object>(sql: string, params?: readonly SqlParam[]) => {
        n++;
        return db.query<T>(sql, params);
      },
    },
    calls: () => n,
  };
}

describe('query lexemes cached per word', () => {
  // A copy of initdb's folder (see pristine-database.ts): nothing here is about creating one.
  const home = tempHome('mnemos-lexemes-', { database: 'initdb' });
  let db: Database;
  before(async () => {
    db = await openEmbeddedDatabase(join(home.path, 'db'));
  });
  after(async () => {
    await db.close();
    home.remove();
  });

  const queries = [
    'What did Alice do with the red bicycles last week?',
    'running runners ran: who RUNS the café in Zürich?',
    'the of and a',
    'mp3 players in 2024, 3d printing and e-mail addresses',
    '東京 で 食べた ラーメン',
    "O'Brien's dogs' toys",
  ];

  it('gives the terms Postgres gives for the whole query', async () => {
    const cache = new LexemeCache();
    for (const query of queries) {
      const words = queryTerms(query);
      const [whole] = await db.query<{ q: string }>(`SELECT to_tsquery('english', $1)::text AS q`, [words.join(' | ')]);
      const expected = words.length === 0 ? [] : tsqueryTerms(whole?.q ?? '');
      assert.deepEqual(new Set(await cache.terms(db, query)), new Set(expected), query);
    }
  });

  it('asks the database only for words it has not seen', async () => {
    const cache = new LexemeCache();
    const { q, calls } = counting(db);
    assert.deepEqual(await cache.terms(q, 'Alice painted the garden shed'), ['alic', 'paint', 'garden', 'shed']);
    assert.equal(calls(), 1);
    assert.deepEqual(await cache.terms(q, 'the shed Alice painted'), ['shed', 'alic', 'paint']);
    assert.equal(calls(), 1, 'every word was known: no statement');
    assert.deepEqual(await cache.terms(q, 'Alice repaired the lighthouse'), ['alic', 'repair', 'lighthous']);
    assert.equal(calls(), 2, 'one statement for the new words');
    assert.deepEqual(await cache.terms(q, 'the and of'), []);
    assert.equal(calls(), 3);
    assert.deepEqual(await cache.terms(q, 'of the'), []);
    assert.equal(calls(), 3, 'stop words are remembered too');
  });
});
