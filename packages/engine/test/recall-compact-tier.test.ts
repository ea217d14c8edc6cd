import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadLocomoText } from '../bench/locomo-text.js';
import { recall, type RecallDependencies } from '../src/recall/pipeline.js';
import type { RecallOutcome } from '../src/recall/types.js';
import type { QueryOptions, SqlParam } from '../src/db/database.js';
import { PostgresBankIndex, type RowsAround } from '../src/vectors/storage/postgres-index.js';
import { VectorCache } from '../src/vectors/vector-cache.js';
import { asServer } from './helpers/as-server.js';
import { heldCompactLoads } from './helpers/held-loads.js';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';
import {
  checkFilterExpression,
  checkTagsAndTypes,
  QUESTIONS,
  request,
  retainFactBanks,
  retainOn,
  rowFilter,
  type RetainTexts,
} from './helpers/recall-facts.js';

/** A node of a plan as EXPLAIN (ANALYZE, FORMAT JSON) writes it: the fields the tests read. */
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Subplan Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: PlanNode[];
}

/**
 * The compact tier answers what the in-memory tier answers: the same memories for each question (its nearest codes
 * are narrowed by their two-bit codes, then ranked by the stored vectors), the same filters, never a deleted memory, always a memory retained before the
 * recall; and a bank too large for the cache's full copy is held compact.
 */

let engine: TestEngine;

/**
 * Conversation turns around the facts: more memories than the compact tier ranks by their stored vectors, so its
 * two-bit codes must choose.
 */
const FILLER = loadLocomoText().turns.slice(0, 420);

const retain: RetainTexts = (tenant, bankId, texts, space, tags) =>
  retainOn(engine.engine)(tenant, bankId, texts, space, tags);

/** Recall's dependencies on the engine's parts, with its own cache, and the compact tier from `minMemories`. */
function dependencies(minMemories: number | undefined, cache?: VectorCache): RecallDependencies {
  const e = engine.engine;
  return {
    db: e.db,
    index: cache ?? new VectorCache(e.store, 384),
    codec: e.codec,
    embedder: e.embedder,
    compact: minMemories === undefined ? undefined : { search: new PostgresBankIndex(e.db, e.store), minMemories },
  };
}

const ids = (o: RecallOutcome, k = o.results.length) => o.results.slice(0, k).map((h) => h.memory.id);

/** The engine's database with compact loads held (helpers/held-loads.ts), and an empty cache. */
function heldLoadsAndCache() {
  const e = engine.engine;
  return { e, held: heldCompactLoads(e.db), cache: new VectorCache(e.store, 384) };
}

/**
 * With the bank's compact load held (`held`, and no copy in `cache`), the database's statements answer the question;
 * once the load is let go and ends, the compact copy does.
 */
async function answersWhileHeldThenCompact(
  deps: RecallDependencies,
  held: ReturnType<typeof heldCompactLoads>,
  cache: VectorCache,
  [question, answer]: [string, number],
): Promise<void> {
  const first = await recall(deps, request('main', question));
  assert.equal(first.trace?.tier, 'postgres', 'with no copy in memory, the database answers');
  assert.equal(first.results[0]?.memory.id, factIds[answer]);
  assert.ok(held.held() > 0 && !cache.has('default', 'main', 'compact'), 'the load started and is held');
  held.release();
  await cache.loading('default', 'main', 'compact');
  const next = await recall(deps, request('main', question));
  assert.equal(next.trace?.tier, 'compact');
  assert.equal(next.results[0]?.memory.id, factIds[answer]);
}

let factIds: string[] = [];

before(async () => {
  engine = await startTestEngine({ MNEMOS_API_RECALL_COMPACT_MIN_MEMORIES: '0' });
  factIds = await retainFactBanks(retain);
  await retain('default', 'main', FILLER);
});
after(async () => {
  await engine?.dispose();
});

describe('the compact tier', () => {
  it('answers the memories the in-memory tier answers, in a bank larger than it ranks by stored vectors', async () => {
    const compact = dependencies(0);
    const inMemory = dependencies(undefined);
    for (const [question, answer] of QUESTIONS) {
      const c = await recall(compact, request('main', question));
      const mem = await recall(inMemory, request('main', question));
      assert.equal(c.trace?.tier, 'compact');
      assert.equal(mem.trace?.tier, 'memory');
      assert.ok(ids(c, 3).includes(factIds[answer]!), `${question}: the answer is in the compact tier's top 3`);
      assert.equal(
        c.results[0]!.memory.id,
        mem.results[0]!.memory.id,
        `${question}: both tiers rank the same memory first`,
      );
      const same = ids(c).filter((id) => ids(mem).includes(id)).length;
      assert.ok(same >= 0.95 * mem.results.length, `${question}: ${same} of ${mem.results.length} results in common`);
      assert.deepEqual(
        c.results.map((h) => h.scores['keyword']),
        c.results.map(
          (h) => mem.results.find((m) => m.memory.id === h.memory.id)?.scores['keyword'] ?? h.scores['keyword'],
        ),
        `${question}: the same keyword scores on both tiers`,
      );
    }
  });

  it('is what the engine uses when the threshold is 0', async () => {
    const r = await call<{ results: Array<{ id: string }> }>(
      engine.url,
      'POST',
      '/v1/default/banks/main/memories/recall',
      { query: "What is the name of Alice's cat?" },
    );
    assert.equal(r.status, 200);
    assert.equal(r.body.results[0]?.id, factIds[0]);
    const metrics = await fetch(`${engine.url}/metrics`).then((m) => m.text());
    assert.match(metrics, /mnemos_recall_tier_total\{tier="compact"\} [1-9]/);
    assert.doesNotMatch(metrics, /mnemos_recall_tier_total\{tier="memory"\}/);
    // The cache reports its compact copies: the bank's memories, and the bytes it counts them at.
    const held = (measure: string) =>
      Number(new RegExp(`mnemos_recall_cache\\{form="compact",measure="${measure}"\\} (\\d+)`).exec(metrics)?.[1]);
    assert.ok(held('memories') >= FILLER.length, `${held('memories')} memories held compact`);
    assert.ok(held('bytes') > 48 * held('memories'), 'at least a code of 48 bytes each');
    assert.match(metrics, /mnemos_recall_cache\{form="full",measure="memories"\} 0/);
  });

  it('never answers a memory of another bank, space or tenant', async () => {
    const deps = dependencies(0);
    for (const [question] of QUESTIONS) {
      const r = await recall(deps, request('main', question));
      assert.ok(r.results.length > 0);
      assert.ok(r.results.every((h) => h.memory.bankId === 'main' && h.memory.space === 'default'));
      assert.ok(
        r.results.every((h) => !h.memory.text.endsWith('(acme copy)') && !h.memory.text.endsWith('(noted at work)')),
      );
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

  it('narrows the candidates by a filter expression before ranking', async () => {
    const deps = dependencies(0);
    await checkFilterExpression(engine.engine.service, FILLER.slice(0, 150), async (r) => {
      const outcome = await recall(deps, r);
      assert.equal(outcome.trace?.tier, 'compact');
      return outcome;
    });
  });

  it('answers a memory retained after the copy loaded, and never one deleted', async () => {
    const cache = new VectorCache(engine.engine.store, 384);
    const deps = dependencies(0, cache);
    const question = 'Which rare orchid did Quentin photograph?';
    const first = await recall(deps, request('main', question));
    assert.ok(cache.has('default', 'main', 'compact'), 'the bank is held compact');
    assert.ok(!cache.has('default', 'main'), 'and not whole');
    const [added] = await retain('default', 'main', ['Quentin photographed a rare ghost orchid in the swamp.']);
    assert.ok(!ids(first).includes(added!));
    const found = await recall(deps, request('main', question));
    assert.equal(found.results[0]?.memory.id, added);
    await engine.engine.service.deleteMemory('default', 'main', added!);
    const gone = await recall(deps, request('main', question));
    assert.ok(gone.results.length > 0);
    assert.ok(!ids(gone).includes(added!));
  });

  it('holds a bank compact when the cache cannot hold it whole, and whole when it can', async () => {
    const store = engine.engine.store;
    const probe = new VectorCache(store, 384);
    await probe.banks(engine.engine.db, 'default', ['main']);
    const tight = new VectorCache(store, 384, Math.floor(probe.bytes / 3));
    const deps = dependencies(Number.POSITIVE_INFINITY, tight);
    const r = await recall(deps, request('main', QUESTIONS[0]![0]));
    assert.equal(r.trace?.tier, 'compact');
    assert.equal(r.results[0]?.memory.id, factIds[0]);
    assert.ok(tight.has('default', 'main', 'compact'));
    assert.ok(tight.bytes < probe.bytes / 3, `the compact copy (${tight.bytes} bytes) fits the bound`);
    const roomy = dependencies(Number.POSITIVE_INFINITY);
    assert.equal((await recall(roomy, request('main', QUESTIONS[0]![0]))).trace?.tier, 'memory');
  });

  it('on a server, answers from the Postgres tier while the compact copy loads in the background', async () => {
    const e = engine.engine;
    const probe = new VectorCache(e.store, 384);
    await probe.banks(e.db, 'default', ['main']);
    const tight = new VectorCache(e.store, 384, Math.floor(probe.bytes / 3));
    const search = new PostgresBankIndex(e.db, e.store);
    const deps: RecallDependencies = {
      ...dependencies(Number.POSITIVE_INFINITY, tight),
      db: asServer(e.db),
      postgres: { search, minMemories: 1_000_000 },
      compact: { search, minMemories: Number.POSITIVE_INFINITY },
    };
    const [question, answer] = QUESTIONS[1]!;
    const first = await recall(deps, request('main', question));
    assert.equal(first.trace?.tier, 'postgres', 'no recall on a server waits for a load');
    assert.equal(first.results[0]?.memory.id, factIds[answer]);
    await tight.loading('default', 'main', 'compact');
    assert.ok(tight.has('default', 'main', 'compact'), 'loaded in the background');
    const next = await recall(deps, request('main', question));
    assert.equal(next.trace?.tier, 'compact');
    assert.equal(next.results[0]?.memory.id, factIds[answer]);
  });

  it(
    "on a server, holds a bank at or above the Postgres tier's threshold compact, the Postgres tier answering while it loads",
    { timeout: 120_000 },
    async () => {
      const { e, held, cache } = heldLoadsAndCache();
      await cache.banks(e.db, 'default', ['main']);
      const search = new PostgresBankIndex(e.db, e.store);
      const deps: RecallDependencies = {
        ...dependencies(Number.POSITIVE_INFINITY, cache),
        db: held.db,
        postgres: { search, minMemories: 100 },
        compact: { search, minMemories: Number.POSITIVE_INFINITY },
      };
      const [question, answer] = QUESTIONS[4]!;
      const whole = await recall(deps, request('main', question));
      assert.equal(whole.trace?.tier, 'memory', 'the whole copy answers while the compact one loads');
      assert.equal(whole.results[0]?.memory.id, factIds[answer]);
      cache.clear();
      await answersWhileHeldThenCompact(deps, held, cache, QUESTIONS[4]!);
    },
  );

  // A recall that waited for the held load would never end: the timeout turns that into a failure.
  it(
    'on a server with the Postgres tier off, answers from the database while a copy loads',
    { timeout: 120_000 },
    async () => {
      const { held, cache } = heldLoadsAndCache();
      const deps: RecallDependencies = { ...dependencies(100, cache), db: held.db };
      assert.equal(deps.postgres, undefined);
      await answersWhileHeldThenCompact(deps, held, cache, QUESTIONS[3]!);
    },
  );

  it(
    'on a server with every bank held compact, answers from the database while a copy loads',
    { timeout: 120_000 },
    async () => {
      const { held, cache } = heldLoadsAndCache();
      await answersWhileHeldThenCompact({ ...dependencies(0, cache), db: held.db }, held, cache, QUESTIONS[5]!);
    },
  );

  it('never holds a bank whole and compact at once', async () => {
    const e = engine.engine;
    const cache = new VectorCache(e.store, 384);
    await cache.banks(e.db, 'default', ['main']);
    assert.ok(cache.has('default', 'main'));
    await cache.compactBanks(e.db, 'default', ['main']);
    assert.ok(cache.has('default', 'main', 'compact'));
    assert.ok(!cache.has('default', 'main'), 'the compact copy replaced the whole one');
    await cache.banks(e.db, 'default', ['main']);
    assert.ok(cache.has('default', 'main'));
    assert.ok(!cache.has('default', 'main', 'compact'), 'the whole copy replaced the compact one');
    assert.equal(cache.usage().compact.memories, 0);
  });

  it("reads an arm's hits with the neighbours of the best of them that pass the filter, and their cosines", async () => {
    const e = engine.engine;
    const search = new PostgresBankIndex(e.db, e.store);
    const turns = ['Ann waters the ferns.', 'Bo paints the fence.', 'Cy bakes rye bread.', 'Di tunes the cello.'];
    const ids = await retain('default', 'around', turns);
    const scope = { tenant: 'default', bankIds: ['around'] };
    const raw = Float32Array.from({ length: 384 }, (_, i) => Math.sin(i + 1));
    const query = raw.map((x) => x / Math.hypot(...raw));
    const stored = await e.db.query<{ id: string; vector: string }>(
      "SELECT id, embedding::text AS vector FROM memories WHERE tenant = 'default' AND bank_id = 'around'",
    );
    const dots = new Map(
      stored.map((r) => [r.id, (JSON.parse(r.vector) as number[]).reduce((a, x, i) => a + x * query[i]!, 0)]),
    );
    const idsOf = (rows: ReadonlyArray<{ meta: { id: string } }>) => rows.map((r) => r.meta.id).sort();
    // The stored floats themselves, as recall's newest-first step reads them.
    const vectors = await search.vectors(scope, ids);
    for (const r of stored) {
      assert.deepEqual([...vectors.get(r.id)!], [...Float32Array.from(JSON.parse(r.vector) as number[])]);
    }

    // The first hit seeds: its neighbours (one position either side in its retain call) come with it.
    const around = await search.rowsAround(scope, rowFilter(), [ids[2]!, ids[0]!], query, 1);
    assert.deepEqual(idsOf(around.hits), [ids[0]!, ids[2]!].sort());
    assert.deepEqual(idsOf(around.neighbours), [ids[1]!, ids[3]!].sort());
    for (const row of [...around.hits, ...around.neighbours]) {
      assert.ok(Math.abs(row.cosine - dots.get(row.meta.id)!) < 1e-5, `the cosine of ${row.meta.id}`);
    }
    // Neighbours pass the filter; hits are read whatever their space.
    const elsewhere = await search.rowsAround(scope, rowFilter({ space: 'elsewhere' }), [ids[2]!], query, 1);
    assert.deepEqual(idsOf(elsewhere.hits), [ids[2]!]);
    assert.deepEqual(elsewhere.neighbours, []);
    assert.deepEqual((await search.rowsAround(scope, rowFilter(), [ids[2]!], query, 0)).neighbours, []);

    // The database keeps the k nearest candidates by their stored vectors, and seeds with the nearest.
    const byCosine = [...ids].sort((a, b) => dots.get(b)! - dots.get(a)!);
    const nearest = await search.nearestAround(scope, rowFilter(), ids, query, 2, 1);
    assert.deepEqual(idsOf(nearest.hits), byCosine.slice(0, 2).sort());
    const best = ids.indexOf(byCosine[0]!);
    const expected = [best - 1, best + 1].filter((i) => i >= 0 && i < ids.length).map((i) => ids[i]!);
    assert.deepEqual(idsOf(nearest.neighbours), expected.sort());
    // The cosines the ranking kept are the ones every pooled read computes, to the last bit.
    const all = await search.rowsAround(scope, rowFilter(), ids, query, 0);
    const cosineOf = new Map(all.hits.map((r) => [r.meta.id, r.cosine]));
    for (const row of nearest.hits) assert.equal(row.cosine, cosineOf.get(row.meta.id));
    // An id asked twice is one hit, seeded from its first place.
    const twice = await search.rowsAround(scope, rowFilter(), [ids[0]!, ids[2]!, ids[0]!], query, 1);
    assert.deepEqual(idsOf(twice.hits), [ids[0]!, ids[2]!].sort());
    assert.deepEqual(idsOf(twice.neighbours), [ids[1]!]);
    // Asked for them, every read brings the stored vectors with the rows, as `vectors` reads them; otherwise none.
    const withVectors = [
      ...(await search.rowsAround(scope, rowFilter(), [ids[0]!], query, 1, true)).hits,
      ...(await search.nearestAround(scope, rowFilter(), ids, query, 2, 1, true)).neighbours,
      ...(await search.rows(scope, [ids[3]!], query, true)),
      ...(await search.at(scope, rowFilter(), [{ batchId: all.hits[0]!.meta.batchId!, seq: 1 }], query, true)),
    ];
    assert.equal(withVectors.length >= 4, true);
    for (const row of withVectors) assert.deepEqual([...row.vector!], [...vectors.get(row.meta.id)!]);
    assert.equal(all.hits.filter((r) => r.vector !== undefined).length, 0);
  });

  it('reads the candidates at the addresses the copy keeps, without the id index; at a stale address, by id', async () => {
    const e = engine.engine;
    // The statements the index sends, so their plans can be read with the same parameters.
    const sent: Array<{ sql: string; params: readonly SqlParam[] }> = [];
    const watched = new Proxy(e.db, {
      get(target, key) {
        if (key === 'query')
          return (sql: string, params: readonly SqlParam[] = [], options?: QueryOptions) => {
            sent.push({ sql, params });
            return target.query(sql, params, options);
          };
        const value: unknown = Reflect.get(target, key);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const search = new PostgresBankIndex(watched, e.store);
    const turns = ['Eve grows basil.', 'Fay rides a bike.', 'Gus fixes clocks.', 'Hal sings in a choir.'];
    // Another bank's rows, whose addresses the stale ones below take.
    await retain('default', 'addressed-before', ['Ivy keeps bees.', 'Jon reads maps.', 'Kim knits scarves.']);
    const ids = await retain('default', 'addressed', turns);
    const scope = { tenant: 'default', bankIds: ['addressed'] };
    const raw = Float32Array.from({ length: 384 }, (_, i) => Math.cos(i + 2));
    const query = raw.map((x) => x / Math.hypot(...raw));
    const addressesOf = async () =>
      new Map(
        (
          await e.db.query<{ id: string; address: string }>(
            "SELECT id, ctid::text AS address FROM memories WHERE bank_id = 'addressed'",
          )
        ).map((r) => [r.id, r.address]),
      );
    const at = await addressesOf();
    const byId = {
      nearest: await search.nearestAround(scope, rowFilter(), ids, query, 3, 1),
      keyword: await search.rowsAround(scope, rowFilter(), [ids[3]!, ids[1]!, ids[3]!], query, 1),
    };
    const summary = (r: RowsAround) => ({
      hits: r.hits.map((h) => [h.meta.id, h.cosine]),
      neighbours: r.neighbours.map((n) => n.meta.id).sort(),
    });
    /** How the last statement read the candidates at their addresses (its CTE `placed`): each scan of `memories`' rows. */
    const placedScans = async () => {
      const { sql, params } = sent.at(-1)!;
      const [row] = await e.db.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
        params,
      );
      // The table's rows live in its partitions: a scan of memories names one of them.
      const tables = new Set(
        (await e.db.query<{ name: string }>(`SELECT relid::text AS name FROM pg_partition_tree('memories')`)).map(
          (t) => t.name,
        ),
      );
      const scans: Array<{ type: string; rows: number }> = [];
      const walk = (node: PlanNode, inPlaced: boolean) => {
        const placed = inPlaced || node['Subplan Name'] === 'CTE placed';
        if (placed && tables.has(node['Relation Name'] ?? ''))
          scans.push({ type: node['Node Type'], rows: node['Actual Rows'] * node['Actual Loops'] });
        node.Plans?.forEach((child) => walk(child, placed));
      };
      walk(row!['QUERY PLAN'][0]!.Plan, false);
      return scans;
    };
    const asked = ids.map((id) => at.get(id)!);
    const placedNearest = await search.nearestAround(scope, rowFilter(), ids, query, 3, 1, false, asked);
    const nearestScans = await placedScans();
    const placedKeyword = await search.rowsAround(scope, rowFilter(), [ids[3]!, ids[1]!, ids[3]!], query, 1, false, [
      asked[3],
      asked[1],
      asked[3],
    ]);
    const keywordScans = await placedScans();
    const placed = { nearest: placedNearest, keyword: placedKeyword };
    // The candidates are read at their addresses and nowhere else (no index or table scan finds them).
    assert.deepEqual(nearestScans, [{ type: 'Tid Scan', rows: 4 }]);
    assert.deepEqual(keywordScans, [{ type: 'Tid Scan', rows: 3 }]);

    assert.deepEqual(summary(placed.nearest), summary(byId.nearest));
    assert.deepEqual(summary(placed.keyword), summary(byId.keyword));

    // Addresses that no longer hold the memories asked (a rewrite of the table moves rows: VACUUM FULL, CLUSTER):
    // another bank's rows, one another candidate holds, one past the table's end. The memories are found by id.
    const others = await e.db.query<{ address: string }>(
      "SELECT ctid::text AS address FROM memories WHERE bank_id = 'addressed-before'",
    );
    const stale = [others[0]!.address, asked[0]!, others[1]!.address, '(4000000,1)'];
    assert.deepEqual(
      summary(await search.nearestAround(scope, rowFilter(), ids, query, 3, 1, false, stale)),
      summary(byId.nearest),
    );
    assert.deepEqual(
      summary(
        await search.rowsAround(scope, rowFilter(), [ids[3]!, ids[1]!, ids[3]!], query, 1, false, [
          stale[3],
          undefined,
          others[2]!.address,
        ]),
      ),
      summary(byId.keyword),
    );
  });
});
