import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { CompactBank } from '../src/vectors/kernels/compact-bank.js';
import type { CompactRow } from '../src/vectors/storage/indexed-row.js';
import { rowFilter } from './helpers/recall-facts.js';
import type { RowFilter } from '../src/vectors/storage/postgres-index.js';

const DIMENSION = 384;
const DAY = 86_400_000;

/** A unit vector pointing mostly along `axis`. */
function vectorAlong(axis: number, noise = 0.1): Float32Array {
  const v = new Float32Array(DIMENSION).map((_, i) => (i === axis ? 1 : noise * Math.sin(i * 7.1 + axis)));
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

const row = (extra: Partial<CompactRow> = {}): CompactRow => ({
  id: randomUUID(),
  space: 'default',
  type: 'raw',
  valid: true,
  tags: [],
  occurredAt: null,
  length: 3,
  validFrom: 0,
  validTo: null,
  expiresAt: null,
  ...extra,
});

const terms = (...t: string[]) => new Map(t.map((x) => [x, 1]));

describe('a compact bank copy', () => {
  it('keeps the rows a recall asks for: space, valid state, types, tags and the time window', () => {
    const bank = new CompactBank(DIMENSION, undefined, 2);
    const rows = [
      row(),
      row({ space: 'work' }),
      row({ valid: false }),
      row({ type: 'world' }),
      row({ tags: ['fruit'] }),
      row({ occurredAt: 10 * DAY }),
    ];
    rows.forEach((r, i) => bank.upsert(r, terms('x'), vectorAlong(i)));
    const kept = (f: RowFilter, window?: { from: number; to: number }) => {
      const keep = bank.keeps(f);
      if (window) return [...bank.nearestIn(window, vectorAlong(0), rows.length, keep)].map((i) => rows[i]!.id);
      return rows.flatMap((r, i) => (keep(i) ? [r.id] : []));
    };
    assert.deepEqual(kept(rowFilter()), [rows[0]!.id, rows[3]!.id, rows[4]!.id, rows[5]!.id]);
    assert.deepEqual(kept(rowFilter({ space: 'work' })), [rows[1]!.id]);
    assert.deepEqual(kept(rowFilter({ space: 'nowhere' })), []);
    assert.deepEqual(kept(rowFilter({ types: ['world'] })), [rows[3]!.id]);
    assert.deepEqual(kept(rowFilter({ tags: ['fruit'], tagsMatch: 'any_strict' })), [rows[4]!.id]);
    assert.deepEqual(kept(rowFilter(), { from: 9 * DAY, to: 11 * DAY }), [rows[5]!.id], 'undated memories are outside');
    assert.deepEqual(kept(rowFilter(), { from: 11 * DAY, to: 12 * DAY }), []);
  });

  it('finds the nearest codes, and forgets a removed memory', () => {
    const bank = new CompactBank(DIMENSION, undefined, 4);
    const rows = Array.from({ length: 50 }, () => row());
    rows.forEach((r, i) => bank.upsert(r, terms('x'), vectorAlong(i)));
    assert.equal(bank.size, 50);
    const query = vectorAlong(17, 0.05);
    const keepAll = bank.keeps(rowFilter());
    assert.equal(bank.idAt(bank.nearest(query, 1, keepAll)[0]!), rows[17]!.id);
    bank.remove(rows[17]!.id);
    assert.equal(bank.size, 49);
    assert.ok(![...bank.ids()].includes(rows[17]!.id));
    const after = [...bank.nearest(query, 49, bank.keeps(rowFilter()))].map((r) => bank.idAt(r));
    assert.ok(!after.includes(rows[17]!.id), 'a removed memory is never a candidate');
    assert.equal(after.length, 49);
    const reused = row();
    bank.upsert(reused, terms('y'), vectorAlong(17));
    assert.equal(
      bank.idAt(bank.nearest(query, 1, bank.keeps(rowFilter()))[0]!),
      reused.id,
      'a memory added after a removal is found',
    );
    assert.deepEqual(new Set(bank.ids()), new Set([...rows.filter((_, i) => i !== 17).map((r) => r.id), reused.id]));
  });

  it('matches the rows holding the selecting terms, with their lengths and counts, up to the bound', () => {
    const bank = new CompactBank(DIMENSION);
    const a = row({ length: 4 });
    const b = row({ length: 9 });
    const c = row({ length: 2, space: 'work' });
    bank.upsert(
      a,
      new Map([
        ['orchid', 2],
        ['swamp', 1],
      ]),
      vectorAlong(1),
    );
    bank.upsert(b, new Map([['orchid', 1]]), vectorAlong(2));
    bank.upsert(
      c,
      new Map([
        ['orchid', 1],
        ['swamp', 3],
      ]),
      vectorAlong(3),
    );
    const m = bank.matching(['orchid'], ['orchid', 'swamp'], bank.keeps(rowFilter()));
    assert.deepEqual(
      [...m.rows].map((r) => bank.idAt(r)),
      [a.id, b.id],
    );
    assert.deepEqual([...m.lengths], [4, 9]);
    assert.deepEqual([...m.counts], [2, 1, 1, 0]);
    // An edit replaces the memory's terms: its old ones no longer match.
    bank.upsert({ ...a }, new Map([['fern', 1]]), vectorAlong(1));
    assert.deepEqual(
      [...bank.matching(['orchid'], ['orchid'], bank.keeps(rowFilter())).rows].map((r) => bank.idAt(r)),
      [b.id],
    );
  });

  it('is wasteful once dead rows (removed or edited memories) outnumber a quarter of the live ones', () => {
    const bank = new CompactBank(DIMENSION);
    const rows = Array.from({ length: 5000 }, () => row());
    rows.forEach((r, i) => bank.upsert(r, terms('x'), vectorAlong(i % DIMENSION)));
    for (const r of rows.slice(0, 1000)) bank.remove(r.id);
    assert.ok(!bank.wasteful, '1,000 dead of 4,000 live');
    for (const r of rows.slice(1000, 1024)) bank.upsert(r, terms('edited'), vectorAlong(3));
    assert.equal(bank.size, 4000);
    assert.ok(!bank.wasteful, '1,024 dead');
    bank.upsert(rows[1024]!, terms('edited'), vectorAlong(3));
    assert.ok(bank.wasteful, '1,025 dead');
  });

  it('finds the nearest memories dated inside a window, in a narrow window and a wide one', () => {
    const bank = new CompactBank(DIMENSION);
    const rows = Array.from({ length: 300 }, (_, i) => row({ occurredAt: i * DAY }));
    rows.forEach((r, i) => bank.upsert(r, terms('x'), vectorAlong(i % 50)));
    const query = vectorAlong(7, 0.05);
    const keep = bank.keeps(rowFilter());
    // 25 dated rows (sorted by distance) and 300 (ranked by the histogram) must answer alike.
    const narrow = [...bank.nearestIn({ from: 100 * DAY, to: 125 * DAY }, query, 2, keep)];
    assert.equal(narrow.length, 2);
    assert.equal(bank.idAt(narrow[0]!), rows[107]!.id, 'the row along the query inside the window');
    assert.ok(narrow.every((r) => r >= 100 && r < 125));
    const all = [...bank.nearest(query, 300, keep)].filter((r) => r >= 100 && r < 125).slice(0, 2);
    assert.deepEqual(narrow, all, 'the order of the whole scan, restricted to the window');
    const wide = [...bank.nearestIn({ from: 0, to: 300 * DAY }, query, 3, keep)].map((r) => bank.idAt(r));
    assert.deepEqual(wide, [rows[7]!.id, rows[57]!.id, rows[107]!.id]);
    assert.deepEqual([...bank.nearestIn({ from: 400 * DAY, to: 500 * DAY }, query, 3, keep)], []);
  });
});
