// The filter language on its own: a table of filters over six memories, each answered by the in-memory predicate and by
// the SQL condition on a real embedded database and on the real PostgreSQL server, all three against the expected
// memories; then bad filters, each refused with the JSON pointer of its bad node, and the size bounds.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database, SqlParam } from '../src/db/database.js';
import { openDatabase } from '../src/db/open.js';
import { fieldsOf, type JsonValue } from '../src/filters/ast.js';
import { compareCodePoints, filterPredicate, type FilterAccessor } from '../src/filters/evaluate.js';
import { FILTER_LIMITS, FilterError, parseFilter } from '../src/filters/parse.js';
import { appendParams, filterSql } from '../src/filters/sql.js';
import { tempHome } from './helpers/engine.js';
import { createScratchDatabase, type ScratchDatabase } from './helpers/postgres-server.js';

interface Sample {
  type: string;
  space: string;
  documentId: string | null;
  tags: string[];
  occurredAt: string | null;
  createdAt: string;
  updatedAt: string;
  expiresAt?: string;
  /** As JSON text, so keys such as __proto__ stay plain keys. */
  metadata: string;
}

const SAMPLES: Record<string, Sample> = {
  A: {
    type: 'world',
    space: 'default',
    documentId: 'doc-1',
    tags: ['apollo', 'draft'],
    occurredAt: '2024-03-01T10:00:00.123456Z',
    createdAt: '2024-03-05T00:00:00Z',
    updatedAt: '2024-03-06T00:00:00Z',
    expiresAt: '2030-01-01T00:00:00Z',
    metadata: '{"project":"apollo","priority":3,"owner":{"name":"ann","team":"core"},"labels":["x","y"],"done":true}',
  },
  B: {
    type: 'experience',
    space: 'default',
    documentId: null,
    tags: [],
    occurredAt: null,
    createdAt: '2023-12-31T23:59:59.999999Z',
    updatedAt: '2024-01-01T00:00:00Z',
    metadata: '{"project":"zeus","priority":10,"labels":[1,2.5],"done":false}',
  },
  C: {
    type: 'world',
    space: 'default',
    documentId: 'doc-1',
    tags: ['final'],
    occurredAt: '2024-01-01T00:00:00Z',
    createdAt: '2024-02-01T00:00:00Z',
    updatedAt: '2024-02-01T00:00:00Z',
    expiresAt: '2029-06-01T00:00:00.000500Z',
    metadata: '{"project":"Apollo","priority":"3","a.b":"dotted","gone":null}',
  },
  D: {
    type: 'opinion',
    space: 'other',
    documentId: 'doc-2',
    tags: ['draft'],
    occurredAt: '2025-06-15T08:30:00Z',
    createdAt: '2025-06-15T08:30:00Z',
    updatedAt: '2025-06-16T00:00:00Z',
    metadata: '{}',
  },
  E: {
    type: 'observation',
    space: 'default',
    documentId: null,
    tags: ['apollo'],
    occurredAt: null,
    createdAt: '2024-06-01T12:00:00.0005Z',
    updatedAt: '2024-06-01T12:00:00.0005Z',
    metadata: '{"project":"apollo-2","priority":2.5,"emoji":"\\ud83d\\ude00","bmp":"\\ufffd","owner":{"name":"bob"}}',
  },
  F: {
    type: 'world',
    space: 'default',
    documentId: 'doc-3',
    tags: ['draft', 'final'],
    occurredAt: '1999-12-31T23:59:59Z',
    createdAt: '2024-01-15T00:00:00Z',
    updatedAt: '2024-01-15T00:00:00Z',
    metadata: '{"labels":[["x"]],"nested":{"deep":{"x":1}},"empty":"","__proto__":"proto","owner":"carol"}',
  },
};
const LABELS = Object.keys(SAMPLES);
const idOf = (label: string) => `00000000-0000-4000-8000-0000000000${(LABELS.indexOf(label) + 10).toString()}`;
const labelOf = (id: string) => LABELS.find((l) => idOf(l) === id)!;

/** Filters as the wire sends them, and the memories each selects. */
const CASES: Array<[filter: unknown, expected: string]> = [
  [{ type: 'world' }, 'ACF'],
  [{ type: { ne: 'world' } }, 'BDE'],
  [{ type: { in: ['opinion', 'observation'] } }, 'DE'],
  [{ type: { nin: ['world', 'experience'] } }, 'DE'],
  [{ space: 'other' }, 'D'],
  [{ space: { contains: 'fau' } }, 'ABCEF'],
  [{ document_id: 'doc-1' }, 'AC'],
  [{ document_id: null }, 'BE'],
  [{ document_id: { ne: null } }, 'ACDF'],
  [{ document_id: { exists: false } }, 'BE'],
  [{ document_id: { ne: 'doc-1' } }, 'BDEF'],
  [{ document_id: { gte: 'doc-2' } }, 'DF'],
  [{ document_id: { nin: ['doc-1'] } }, 'BDEF'],
  [{ document_id: { contains: '-3' } }, 'F'],
  [{ tags: 'draft' }, 'ADF'],
  [{ tags: { ne: 'draft' } }, 'BCE'],
  [{ tags: { in: ['final', 'apollo'] } }, 'ACEF'],
  [{ tags: { nin: ['final', 'apollo'] } }, 'BD'],
  [{ tags: { contains: ['draft', 'final'] } }, 'F'],
  [{ tags: { contains: 'apollo' } }, 'AE'],
  [{ tags: { exists: false } }, 'B'],
  [{ tags: { exists: true } }, 'ACDEF'],
  // timestamp: occurred_at, else created_at.
  [{ timestamp: { gte: '2024-01-01' } }, 'ACDE'],
  [{ timestamp: { lt: '2024-01-01' } }, 'BF'],
  // A stored time compares by its millisecond: 23:59:59.999999 is 23:59:59.999.
  [{ created_at: { lte: '2023-12-31T23:59:59.999Z' } }, 'B'],
  [{ created_at: { gt: '2023-12-31T23:59:59.999Z' } }, 'ACDEF'],
  [{ created_at: { eq: '2023-12-31T23:59:59.999Z' } }, 'B'],
  [{ created_at: '2024-06-01T12:00:00Z' }, 'E'],
  [{ created_at: { ne: '2024-06-01T12:00:00Z' } }, 'ABCDF'],
  [{ timestamp: { gte: '2024-03-01T10:00:00.123Z', lt: '2024-03-01T10:00:00.124Z' } }, 'A'],
  [{ timestamp: { in: ['2024-01-01', '2025-06-15T10:30:00+02:00'] } }, 'CD'],
  [{ timestamp: { nin: ['2024-01-01'] } }, 'ABDEF'],
  [{ updated_at: { gte: '2024-01-01', lt: '2024-02-01' } }, 'BF'],
  [{ timestamp: { exists: true } }, 'ABCDEF'],
  [{ timestamp: { exists: false } }, ''],
  // expires_at: a memory without one is absent (kept), as a missing metadata key.
  [{ expires_at: { exists: true } }, 'AC'],
  [{ expires_at: { exists: false } }, 'BDEF'],
  [{ expires_at: { lt: '2030-01-01' } }, 'C'],
  [{ expires_at: { gte: '2029-06-01' } }, 'AC'],
  [{ expires_at: '2029-06-01T00:00:00Z' }, 'C'],
  [{ expires_at: { ne: '2030-01-01T00:00:00Z' } }, 'BCDEF'],
  [{ expires_at: { nin: ['2030-01-01'] } }, 'BCDEF'],
  [{ expires_at: { in: ['2030-01-01'] } }, 'A'],
  [{ not: { expires_at: { lt: '2030-01-01' } } }, 'ABDEF'],
  [{ 'metadata.project': 'apollo' }, 'A'],
  [{ 'metadata.project': { ne: 'apollo' } }, 'BCDEF'],
  [{ 'metadata.project': { in: ['apollo', 'Apollo'] } }, 'AC'],
  [{ 'metadata.project': { contains: 'pollo' } }, 'ACE'],
  [{ 'metadata.project': { gt: 'apollo' } }, 'BE'],
  [{ 'metadata.project': { exists: false } }, 'DF'],
  // Numbers compare as numbers, and only with numbers; strings only with strings.
  [{ 'metadata.priority': { gte: 3 } }, 'AB'],
  [{ 'metadata.priority': { lt: 3 } }, 'E'],
  [{ 'metadata.priority': 3 }, 'A'],
  [{ 'metadata.priority': '3' }, 'C'],
  [{ 'metadata.priority': { in: [3, '3'] } }, 'AC'],
  [{ 'metadata.priority': { gte: '3' } }, 'C'],
  [{ 'metadata.owner.name': 'ann' }, 'A'],
  [{ 'metadata.owner.name': { exists: true } }, 'AE'],
  [{ 'metadata.owner': { eq: { team: 'core', name: 'ann' } } }, 'A'],
  [{ 'metadata.owner': { eq: { name: 'bob' } } }, 'E'],
  [{ 'metadata.owner': 'carol' }, 'F'],
  [{ 'metadata.labels': { contains: 'x' } }, 'A'],
  [{ 'metadata.labels': { contains: 2.5 } }, 'B'],
  [{ 'metadata.labels': ['x', 'y'] }, 'A'],
  [{ 'metadata.labels': { eq: ['y', 'x'] } }, ''],
  [{ 'metadata.labels.0': 'x' }, ''],
  [{ 'metadata.done': false }, 'B'],
  [{ 'metadata.done': { ne: true } }, 'BCDEF'],
  // A null value is no value.
  [{ 'metadata.gone': null }, 'ABCDEF'],
  [{ 'metadata.gone': { exists: true } }, ''],
  [{ 'metadata.a\\.b': 'dotted' }, 'C'],
  [{ 'metadata.a.b': 'dotted' }, ''],
  [{ 'metadata.nested.deep.x': { gte: 1 } }, 'F'],
  [{ 'metadata.nested.deep': { eq: { x: 1.0 } } }, 'F'],
  // Code point order, as the database's "C" collation: U+1F600 comes after U+FFFD.
  [{ 'metadata.emoji': { gt: '\ufffd' } }, 'E'],
  [{ 'metadata.bmp': { lt: '\u{1f600}' } }, 'E'],
  [{ 'metadata.empty': { contains: '' } }, 'F'],
  [{ 'metadata.empty': { exists: true } }, 'F'],
  [{ 'metadata.__proto__': 'proto' }, 'F'],
  [{ 'metadata.constructor': { exists: true } }, ''],
  [{ 'metadata.toString': { exists: false } }, 'ABCDEF'],
  [
    {
      and: [
        { 'metadata.project': 'apollo' },
        { timestamp: { gte: '2024-01-01' } },
        { not: { tags: { contains: 'draft' } } },
      ],
    },
    '',
  ],
  [
    {
      and: [
        { 'metadata.project': { in: ['apollo', 'apollo-2'] } },
        { timestamp: { gte: '2024-01-01' } },
        { not: { tags: { contains: 'draft' } } },
      ],
    },
    'E',
  ],
  [{ or: [{ type: 'opinion' }, { 'metadata.priority': { gt: 5 } }] }, 'BD'],
  [{ not: { or: [{ type: 'world' }, { tags: 'draft' }] } }, 'BE'],
  [{ type: 'world', tags: 'final' }, 'CF'],
  [{ AND: [{ type: 'world' }], OR: [{ tags: 'draft' }, { document_id: null }] }, 'AF'],
  [{ not: { not: { space: 'other' } } }, 'D'],
  [{ not: { 'metadata.priority': { gt: 5 } } }, 'ACDEF'],
];

/** A memory as an in-memory tier would hold it: what the database answers, times in epoch milliseconds. */
interface HeldRow {
  id: string;
  type: string;
  space: string;
  document_id: string | null;
  tags: string[];
  occurred_ms: number | null;
  created_ms: number;
  updated_ms: number;
  expires_ms: number | null;
  metadata: Record<string, JsonValue>;
}

const ACCESSOR: FilterAccessor<HeldRow> = {
  type: (r) => r.type,
  space: (r) => r.space,
  documentId: (r) => r.document_id,
  tags: (r) => r.tags,
  occurredAt: (r) => r.occurred_ms,
  createdAt: (r) => r.created_ms,
  updatedAt: (r) => r.updated_ms,
  expiresAt: (r) => r.expires_ms,
  metadata: (r) => r.metadata,
};

const home = tempHome('mnemos-filters-');
let embedded: Database;
let external: Database;
let scratch: ScratchDatabase;
let held: HeldRow[];

async function fill(db: Database): Promise<void> {
  for (const label of LABELS) {
    const s = SAMPLES[label]!;
    await db.query(
      `INSERT INTO memories (id, tenant, bank_id, space, type, text, metadata, tags, document_id, content_hash,
         occurred_at, created_at, updated_at, expires_at, fts)
       VALUES ($1, 'default', 'filters', $2, $3, $4, $5::jsonb, $6::text[], $7, $8, $9::timestamptz, $10::timestamptz,
         $11::timestamptz, $12::timestamptz, ''::tsvector)`,
      [
        idOf(label),
        s.space,
        s.type,
        `memory ${label}`,
        s.metadata,
        s.tags,
        s.documentId,
        `hash-${label}`,
        s.occurredAt,
        s.createdAt,
        s.updatedAt,
        s.expiresAt ?? null,
      ],
    );
  }
}

before(async () => {
  scratch = await createScratchDatabase('mnemos_filters');
  [embedded, external] = await Promise.all([
    openDatabase({ home: home.path, databaseUrl: undefined }).then((o) => o.db),
    openDatabase({ home: home.path, databaseUrl: scratch.url }).then((o) => o.db),
  ]);
  await Promise.all([fill(embedded), fill(external)]);
  held = await heldRows(embedded);
  assert.equal(held.length, LABELS.length);
});
after(async () => {
  await embedded?.close();
  await external?.close();
  await scratch?.drop();
  home.remove();
});

const labels = (ids: Iterable<string>) => [...ids].map(labelOf).sort().join('');

async function selectedBySql(db: Database, filter: unknown): Promise<string> {
  const where = filterSql(parseFilter(filter));
  const rows = await db.query<{ id: string }>(
    `SELECT id FROM memories WHERE tenant = 'default' AND bank_id = 'filters' AND ${where.text}`,
    where.values as SqlParam[],
  );
  return labels(rows.map((r) => r.id));
}

async function heldRows(db: Database): Promise<HeldRow[]> {
  const rows = await db.query<Omit<HeldRow, 'metadata'> & { metadata: string }>(
    `SELECT id, type, space, document_id, tags, metadata::text AS metadata,
       (extract(epoch FROM occurred_at) * 1000)::float8 AS occurred_ms,
       (extract(epoch FROM created_at) * 1000)::float8 AS created_ms,
       (extract(epoch FROM updated_at) * 1000)::float8 AS updated_ms,
       (extract(epoch FROM expires_at) * 1000)::float8 AS expires_ms
     FROM memories WHERE tenant = 'default' AND bank_id = 'filters'`,
  );
  return rows.map((r) => ({ ...r, metadata: JSON.parse(r.metadata) as HeldRow['metadata'] }));
}

describe('a filter selects the same memories in memory, on the embedded database and on PostgreSQL', () => {
  for (const [filter, expected] of CASES) {
    it(`${JSON.stringify(filter)} -> ${expected === '' ? 'none' : expected}`, async () => {
      const parsed = parseFilter(filter);
      const keep = filterPredicate(parsed, ACCESSOR);
      assert.equal(labels(held.filter(keep).map((r) => r.id)), expected, 'in memory');
      assert.equal(await selectedBySql(embedded, filter), expected, 'embedded database');
      assert.equal(await selectedBySql(external, filter), expected, 'PostgreSQL');
    });
  }

  it('fits a statement with numbered placeholders and a table alias', async () => {
    const params: SqlParam[] = ['filters'];
    const where = appendParams(filterSql(parseFilter({ 'metadata.priority': { gte: 3 }, type: 'world' }), 'm'), params);
    assert.match(where, /m\.metadata/);
    for (const db of [embedded, external]) {
      const rows = await db.query<{ id: string }>(
        `SELECT m.id FROM memories m WHERE m.tenant = 'default' AND m.bank_id = $1 AND ${where}`,
        params,
      );
      assert.equal(labels(rows.map((r) => r.id)), 'A');
    }
  });
});

describe('the filter tree', () => {
  it('names the fields a filter reads, so a tier can tell whether it holds them', () => {
    const parsed = parseFilter({ or: [{ 'metadata.a': 1 }, { not: { tags: 'x' } }], timestamp: { gte: '2024-01-01' } });
    assert.deepEqual([...fieldsOf(parsed)].sort(), ['metadata', 'tags', 'timestamp']);
  });

  it('orders strings by code point', () => {
    assert.ok(compareCodePoints('\u{1f600}', '\ufffd') > 0);
    assert.ok(compareCodePoints('a', 'b') < 0);
    assert.ok(compareCodePoints('ab', 'a') > 0);
    assert.equal(compareCodePoints('x\u{1f600}', 'x\u{1f600}'), 0);
  });
});

/** Bad filters, the pointer of their bad node, and words of the detail. */
const BAD: Array<[filter: unknown, pointer: string, detail: RegExp]> = [
  [[], '/filter', /must be an object/],
  ['type = world', '/filter', /must be an object/],
  [{}, '/filter', /is empty/],
  [{ and: [] }, '/filter/and', /non-empty list/],
  [{ and: [{ type: 'world' }, 3] }, '/filter/and/1', /must be an object/],
  [{ colour: 'red' }, '/filter/colour', /not a field/],
  [{ eq: 3 }, '/filter/eq', /is an operator/],
  [{ type: { like: 'w' } }, '/filter/type/like', /not an operator/],
  [
    { or: [{ type: 'world' }, { timestamp: { after: '2024-01-01' } }] },
    '/filter/or/1/timestamp/after',
    /not an operator/,
  ],
  [{ type: {} }, '/filter/type', /no operator/],
  [{ type: 'fact' }, '/filter/type', /not a memory type/],
  [{ type: null }, '/filter/type', /cannot be null/],
  [{ tags: { gt: 'a' } }, '/filter/tags/gt', /no order/],
  [{ tags: 3 }, '/filter/tags', /a tag/],
  [{ timestamp: { gte: 'yesterday' } }, '/filter/timestamp/gte', /RFC 3339/],
  [{ timestamp: { gte: '2024-02-30' } }, '/filter/timestamp/gte', /RFC 3339/],
  [{ timestamp: { gte: '0000-06-01' } }, '/filter/timestamp/gte', /between 0001-01-01/],
  [{ created_at: { contains: '2024' } }, '/filter/created_at/contains', /compare dates/],
  [{ 'metadata.x': { in: [{ a: 1 }] } }, '/filter/metadata.x/in/0', /string, a number or a boolean/],
  [{ 'metadata.x': { in: [] } }, '/filter/metadata.x/in', /non-empty list/],
  [{ 'metadata.x': { gt: true } }, '/filter/metadata.x/gt', /number or a string/],
  [{ 'metadata.x': { exists: 'yes' } }, '/filter/metadata.x/exists', /true or false/],
  [{ 'metadata.x': 'a\u0000b' }, '/filter/metadata.x', /NUL/],
  [{ metadata: 'x' }, '/filter/metadata', /name a key/],
  [{ 'metadata.a..b': 1 }, '/filter/metadata.a..b', /empty metadata key/],
  [{ not: [{ type: 'world' }] }, '/filter/not', /must be an object/],
  [{ 'a/b~c': 1 }, '/filter/a~1b~0c', /not a field/],
  [{ or: [{ and: [{ tags: { in: 'draft' } }] }] }, '/filter/or/0/and/0/tags/in', /non-empty list/],
];

describe('a bad filter is refused with the pointer of its bad node', () => {
  for (const [filter, pointer, detail] of BAD) {
    it(`${JSON.stringify(filter)} at ${pointer}`, () => {
      assert.throws(
        () => parseFilter(filter, '/filter'),
        (error: unknown) => {
          assert.ok(error instanceof FilterError, String(error));
          assert.equal(error.pointer, pointer);
          assert.match(error.detail, detail);
          return true;
        },
      );
    });
  }
});

describe('the bounds of a filter', () => {
  const refusedAt = (filter: unknown, pointer: string, detail: RegExp) =>
    assert.throws(
      () => parseFilter(filter, '/filter'),
      (e: unknown) => e instanceof FilterError && e.pointer === pointer && detail.test(e.detail),
    );
  const nestedNots = (n: number): unknown => (n === 0 ? { type: 'world' } : { not: nestedNots(n - 1) });

  it(`nests and/or/not at most ${FILTER_LIMITS.depth} deep`, () => {
    assert.doesNotThrow(() => parseFilter(nestedNots(FILTER_LIMITS.depth)));
    refusedAt(nestedNots(FILTER_LIMITS.depth + 1), `/filter${'/not'.repeat(FILTER_LIMITS.depth + 1)}`, /deeper/);
  });

  it(`holds at most ${FILTER_LIMITS.nodes} nodes`, () => {
    const conditions = (n: number) => ({ or: Array.from({ length: n }, (_, i) => ({ 'metadata.n': i })) });
    assert.doesNotThrow(() => parseFilter(conditions(FILTER_LIMITS.nodes - 1)));
    refusedAt(conditions(FILTER_LIMITS.nodes), `/filter/or/${FILTER_LIMITS.nodes - 1}/metadata.n`, /longer than/);
  });

  it(`lists at most ${FILTER_LIMITS.listValues} values`, () => {
    const list = (n: number) => ({ tags: { in: Array.from({ length: n }, (_, i) => `t${i}`) } });
    assert.doesNotThrow(() => parseFilter(list(FILTER_LIMITS.listValues)));
    refusedAt(list(FILTER_LIMITS.listValues + 1), '/filter/tags/in', /more than/);
  });

  it(`holds at most ${FILTER_LIMITS.textChars} characters of text`, () => {
    refusedAt({ 'metadata.x': 'a'.repeat(FILTER_LIMITS.textChars) }, '/filter/metadata.x', /characters/);
  });

  it(`reads metadata paths of at most ${FILTER_LIMITS.pathKeys} keys and values ${FILTER_LIMITS.valueDepth} deep`, () => {
    const path = (n: number) => `metadata.${Array.from({ length: n }, (_, i) => `k${i}`).join('.')}`;
    assert.doesNotThrow(() => parseFilter({ [path(FILTER_LIMITS.pathKeys)]: 1 }));
    refusedAt({ [path(FILTER_LIMITS.pathKeys + 1)]: 1 }, `/filter/${path(FILTER_LIMITS.pathKeys + 1)}`, /more than/);
    const deep = (n: number): unknown => (n === 0 ? 1 : [deep(n - 1)]);
    refusedAt(
      { 'metadata.x': { eq: deep(FILTER_LIMITS.valueDepth + 1) } },
      `/filter/metadata.x/eq${'/0'.repeat(FILTER_LIMITS.valueDepth)}`,
      /deeper/,
    );
  });
});
