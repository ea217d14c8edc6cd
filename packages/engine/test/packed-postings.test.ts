import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PackedPostings } from '../src/vectors/kernels/packed-postings.js';

const read = (p: PackedPostings, stopAfter = Number.POSITIVE_INFINITY) => {
  const out: Array<[number, number]> = [];
  p.each((row, count) => {
    out.push([row, count]);
    return out.length < stopAfter;
  });
  return out;
};

describe('packed postings', () => {
  it('give back every row and count in order, small and large gaps alike', () => {
    const p = new PackedPostings();
    const posted: Array<[number, number]> = [
      [0, 1],
      [1, 2],
      [127, 1],
      [128, 255],
      [16_511, 1],
      [2 ** 31 - 2, 7],
      [2 ** 31 - 1, 1],
    ];
    for (const [row, count] of posted) p.add(row, count);
    assert.equal(p.size, posted.length);
    assert.deepEqual(read(p), posted);
    assert.deepEqual(read(p, 2), posted.slice(0, 2), 'a visit answering false stops the walk');
  });

  it('take a byte for a near row counted once, and grow by half', () => {
    const p = new PackedPostings();
    for (let row = 0; row < 10_000; row++) p.add(row * 3, 1);
    assert.equal(read(p).length, 10_000);
    assert.ok(p.capacity <= 1.5 * 10_000 + 8, `${p.capacity} bytes for 10,000 postings`);
  });

  it('refuse a row that is not after the last', () => {
    const p = new PackedPostings();
    p.add(5, 1);
    assert.throws(() => p.add(5, 1), RangeError);
    assert.throws(() => p.add(4, 1), RangeError);
  });
});
