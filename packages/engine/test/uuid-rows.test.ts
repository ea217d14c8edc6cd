import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { UuidRows } from '../src/vectors/kernels/uuid-rows.js';

/** Ids that share their last eight hex digits (the table's hash), so they land in one probe run. */
const colliding = (n: number): string[] =>
  Array.from({ length: n }, (_, i) => `${i.toString(16).padStart(8, '0')}-0000-4000-8000-0000deadbeef`);

describe('UuidRows', () => {
  it('finds every id it holds, and none it does not, as it grows', () => {
    const table = new UuidRows();
    const ids = Array.from({ length: 20_000 }, () => randomUUID());
    ids.forEach((id, row) => table.set(id, row));
    assert.equal(table.size, ids.length);
    ids.forEach((id, row) => assert.equal(table.get(id), row));
    assert.equal(table.get(randomUUID()), undefined);
    assert.equal(table.idAt(1234), ids[1234]);
    assert.deepEqual(
      [...table.rows()].sort((a, b) => a - b),
      ids.map((_, row) => row),
    );
  });

  it('keeps the rest of a probe run reachable when an id in the middle of it is deleted', () => {
    const table = new UuidRows();
    const ids = [...colliding(12), ...Array.from({ length: 500 }, () => randomUUID())];
    ids.forEach((id, row) => table.set(id, row));
    for (const gone of [3, 0, 11, 7]) assert.equal(table.delete(ids[gone]!), gone);
    assert.equal(table.delete(ids[3]!), undefined, 'a second delete finds nothing');
    ids.forEach((id, row) => assert.equal(table.get(id), [0, 3, 7, 11].includes(row) ? undefined : row, id));
    assert.equal(table.size, ids.length - 4);
    table.set(ids[3]!, 9000);
    assert.equal(table.get(ids[3]!), 9000);
    assert.equal(table.idAt(9000), ids[3]);
  });

  it('reads upper-case ids as the same ids', () => {
    const table = new UuidRows();
    const id = randomUUID();
    table.set(id, 0);
    assert.equal(table.get(id.toUpperCase()), 0);
  });
});
