import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { vectorLiteral } from '../src/memory/vector-literal.js';
import { CompactArms } from '../src/recall/compact-arms.js';
import type { ArmSearch } from '../src/recall/postgres-arms.js';
import { PostgresBankIndex } from '../src/vectors/storage/postgres-index.js';
import { VectorCache } from '../src/vectors/vector-cache.js';
import { startTestEngine, type TestEngine } from './helpers/engine.js';
import { rowFilter } from './helpers/recall-facts.js';

/**
 * The keyword arm answers the best BM25 scores among every row its plan selects, best first, on the tiers that search
 * outside the in-memory copy: a row budget never makes it score an arbitrary part of the matches.
 */

let engine: TestEngine;

const BANK = 'keyword-order';
const scope = { tenant: 'default', bankIds: [BANK] };
/** Rows holding the term once among many words: low scores. */
const WEAK_ROWS = 30;
const HARBOUR = [{ term: 'harbour', idf: 1 }];

/** The id of the one short row that holds the term three times: the best match, stored after every weak one. */
let best = '';

before(async () => {
  engine = await startTestEngine();
  const db = engine.engine.db;
  const [vector] = await engine.engine.embedder.embed(['a note about the harbour'], 'document');
  // Rows written straight into the table, in this order, so the best match lies after the weak ones in the heap, the
  // index and the compact copy's postings.
  await db.query(
    `INSERT INTO memories (id, tenant, bank_id, space, type, text, content_hash, fts, embedding, batch_id, seq)
     SELECT gen_random_uuid(), 'default', $2, 'default', 'raw', t, md5(t), to_tsvector('english', t), $1::vector, NULL, 0
     FROM (SELECT 'harbour note number ' || i || ' about ferries, gulls, ropes, tides, nets and boats' AS t
           FROM generate_series(1, ${WEAK_ROWS}) AS i) w`,
    [vectorLiteral(vector!), BANK],
  );
  const [row] = await db.query<{ id: string }>(
    `INSERT INTO memories (id, tenant, bank_id, space, type, text, content_hash, fts, embedding, batch_id, seq)
     VALUES (gen_random_uuid(), 'default', $2, 'default', 'raw', 'harbour harbour harbour', md5('harbour x3'),
             to_tsvector('english', 'harbour harbour harbour'), $1::vector, NULL, 0)
     RETURNING id::text AS id`,
    [vectorLiteral(vector!), BANK],
  );
  best = row!.id;
});
after(async () => {
  await engine?.dispose();
});

describe('the keyword arm beyond the in-memory copy', () => {
  it('on the Postgres tier, answers the best match first when the matches fit the row budget', async () => {
    const search = new PostgresBankIndex(engine.engine.db, engine.engine.store);
    const found = await search.keyword(scope, rowFilter(), ['harbour'], HARBOUR, 5, WEAK_ROWS + 1);
    assert.equal(found[0]?.id, best);
    assert.equal(found.length, 5);
  });

  it('on the Postgres tier, answers nothing rather than scoring part of the matches when they exceed the budget', async () => {
    const search = new PostgresBankIndex(engine.engine.db, engine.engine.store);
    const found = await search.keyword(scope, rowFilter(), ['harbour'], HARBOUR, 5, 10);
    assert.deepEqual(found, [], 'no arbitrary ten of the 31 matches are scored');
  });

  it('on the compact tier, scores every matching row whatever the budget', async () => {
    const e = engine.engine;
    const copies = await new VectorCache(e.store, 384).compactBanks(e.db, 'default', [BANK]);
    // Called as recall calls it, with the Postgres tier's row budget: ten, fewer than the matches.
    const arms: ArmSearch = new CompactArms(copies, new PostgresBankIndex(e.db, e.store));
    const found = await arms.keyword(scope, rowFilter(), ['harbour'], HARBOUR, 5, 10);
    assert.equal(found[0]?.id, best, 'the best match is found although ten rows come before it');
    assert.equal(found.length, 5);
    for (let i = 1; i < found.length; i++) assert.ok(found[i - 1]!.score >= found[i]!.score, 'best first');
  });
});
