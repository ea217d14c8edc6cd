import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BinaryCodes, nearestRows } from '../src/vectors/kernels/binary-codes.js';
import { Rng } from './helpers/fuzz.js';

/** Binary codes: Hamming distances equal a plain bit-by-bit count, on both paths; nearestRows equals a full sort. */

function vectors(count: number, dimension: number, seed: number): Float32Array[] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, () => Float32Array.from({ length: dimension }, () => rng.next() * 2 - 1));
}

/** The reference: dimensions whose side of the center differs between the two vectors, counted one by one. */
function referenceDistance(a: Float32Array, b: Float32Array, center?: Float32Array): number {
  let d = 0;
  for (let j = 0; j < a.length; j++) {
    const c = center?.[j] ?? 0;
    if (a[j]! > c !== b[j]! > c) d++;
  }
  return d;
}

function assertDistances(codes: BinaryCodes, rows: Float32Array[], query: Float32Array, center?: Float32Array): void {
  const got = Array.from(codes.distances(query, rows.length));
  assert.deepEqual(
    got,
    rows.map((row) => referenceDistance(row, query, center)),
  );
}

describe('BinaryCodes', () => {
  for (const [dimension, simd] of [
    [384, true],
    [384, false],
    [256, true],
    [100, true],
    [3968, true],
    [4096, true],
  ] as const) {
    it(`${dimension} dimensions${simd ? '' : ' in JS'}: distances equal the bit-by-bit count, before and after growth and re-sets`, () => {
      const rows = vectors(37, dimension, dimension);
      const queries = vectors(3, dimension, dimension + 1);
      const codes = BinaryCodes.create(dimension, 10, undefined, { simd });
      const expectSimd = simd && dimension % 128 === 0 && dimension <= 3968;
      assert.equal(codes.simd, expectSimd);
      rows.slice(0, 10).forEach((v, i) => codes.set(i, v));
      for (const q of queries) assertDistances(codes, rows.slice(0, 10), q);

      codes.reserve(37);
      assert.equal(codes.rowCapacity, 37);
      rows.slice(10).forEach((v, i) => codes.set(10 + i, v));
      for (const q of queries) assertDistances(codes, rows, q);

      const replaced = vectors(5, dimension, dimension + 2);
      [0, 9, 10, 20, 36].forEach((row, i) => {
        rows[row] = replaced[i]!;
        codes.set(row, replaced[i]!);
      });
      for (const q of queries) assertDistances(codes, rows, q);
      assert.deepEqual(
        Array.from(codes.distances(queries[0]!, 4)),
        Array.from(codes.distances(queries[0]!, 37)).slice(0, 4),
      );
    });
  }

  it('counts every bit when all differ, at the widest SIMD dimension (no byte lane overflows)', () => {
    for (const dimension of [384, 3968]) {
      const codes = BinaryCodes.create(dimension, 2);
      assert.ok(codes.simd);
      const ones = new Float32Array(dimension).fill(1);
      codes.set(0, ones);
      codes.set(
        1,
        ones.map((x) => -x),
      );
      assert.deepEqual(Array.from(codes.distances(ones, 2)), [0, dimension]);
    }
  });

  it('takes bits against the center when one is given', () => {
    const dimension = 256;
    const rows = vectors(50, dimension, 7).map((v) => v.map((x) => x + 0.3));
    const center = new Float32Array(dimension).fill(0.3);
    for (const simd of [true, false]) {
      const codes = BinaryCodes.create(dimension, rows.length, center, { simd });
      rows.forEach((v, i) => codes.set(i, v));
      for (const q of vectors(3, dimension, 8)) assertDistances(codes, rows, q, center);
    }
  });

  it('signedDots: the query dotted with each listed row read as +1 above the center and -1 below', () => {
    for (const [dimension, simd] of [
      [384, true],
      [100, false],
    ] as const) {
      const rows = vectors(40, dimension, 21);
      const center = Float32Array.from(vectors(1, dimension, 22)[0]!, (x) => x / 4);
      const codes = BinaryCodes.create(dimension, rows.length, center, { simd });
      rows.forEach((v, i) => codes.set(i, v));
      const query = vectors(1, dimension, 23)[0]!;
      const listed = [39, 0, 17, 17, 5];
      const expected = listed.map((r) =>
        rows[r]!.reduce((sum, x, j) => sum + (x > center[j]! ? 1 : -1) * query[j]!, 0),
      );
      const got = codes.signedDots(query, Int32Array.from(listed));
      assert.equal(got.length, listed.length);
      got.forEach((value, i) =>
        assert.ok(Math.abs(value - expected[i]!) < 1e-9, `row ${listed[i]}: ${value} against ${expected[i]}`),
      );
    }
  });

  it('the JS path and the SIMD path agree on a larger store', () => {
    const dimension = 384;
    const rows = vectors(1000, dimension, 11);
    const simd = BinaryCodes.create(dimension, rows.length);
    const js = BinaryCodes.create(dimension, rows.length, undefined, { simd: false });
    assert.ok(simd.simd, 'this Node runs WebAssembly SIMD');
    assert.ok(!js.simd);
    rows.forEach((v, i) => {
      simd.set(i, v);
      js.set(i, v);
    });
    for (const q of vectors(5, dimension, 12)) {
      assert.deepEqual(Array.from(simd.distances(q, rows.length)), Array.from(js.distances(q, rows.length)));
    }
  });

  it('counts the bytes it holds, and refuses rows outside what is reserved', () => {
    const codes = BinaryCodes.create(384, 1000);
    assert.ok(codes.bytes >= 1000 * (48 + 2), `${codes.bytes} bytes for 1,000 codes and their distances`);
    assert.ok(codes.bytes < 1000 * (48 + 2) + 2 * 65536, 'no more than a page of slack per area');
    assert.throws(() => codes.set(1000, new Float32Array(384)), /row 1000 is outside the 1000 rows reserved/);
    assert.throws(() => codes.distances(new Float32Array(384), 1001), /1001 rows asked for; 1000 are reserved/);
    assert.throws(() => BinaryCodes.create(384, 1, new Float32Array(10)), /center has 10 components/);
    assert.throws(() => BinaryCodes.create(0, 1), /whole dimension from 1 to 65535/);
  });
});

/** The reference: every row that passes, sorted by distance then row, cut at `want`. */
function sortedRows(distances: Uint16Array, rows: number, want: number, keep: (row: number) => boolean): number[] {
  return Array.from({ length: rows }, (_, r) => r)
    .filter(keep)
    .sort((a, b) => distances[a]! - distances[b]! || a - b)
    .slice(0, Math.max(0, want));
}

describe('nearestRows', () => {
  const rng = new Rng(3);
  /** Few distinct distances, so ties are common. */
  const distances = Uint16Array.from({ length: 5000 }, () => rng.int(40));
  const all = () => true;
  const everyThird = (row: number) => row % 3 === 0;

  it('returns exactly the rows a full sort would, ties by row', () => {
    for (const want of [1, 7, 100, 1000, 4999]) {
      assert.deepEqual(Array.from(nearestRows(distances, 5000, want, all)), sortedRows(distances, 5000, want, all));
    }
  });

  it('looks only at the first `rows` and honours keep', () => {
    for (const want of [1, 50, 600]) {
      assert.deepEqual(
        Array.from(nearestRows(distances, 3000, want, everyThird)),
        sortedRows(distances, 3000, want, everyThird),
      );
    }
  });

  it('answers every row that passes when fewer pass than wanted, and nothing for want 0', () => {
    const few = (row: number) => row % 1000 === 0;
    assert.deepEqual(Array.from(nearestRows(distances, 5000, 10, few)), sortedRows(distances, 5000, 10, few));
    assert.equal(nearestRows(distances, 5000, 10, few).length, 5);
    assert.equal(nearestRows(distances, 5000, 10, () => false).length, 0);
    assert.equal(nearestRows(distances, 5000, 0, all).length, 0);
    assert.equal(nearestRows(distances, 0, 10, all).length, 0);
  });

  it('handles the largest distances a u16 holds', () => {
    const wide = Uint16Array.from([65535, 3, 65535, 0, 40000]);
    assert.deepEqual(Array.from(nearestRows(wide, 5, 4, all)), [3, 1, 4, 0]);
  });

  it('gives the same answer on a second call (its scratch counts start clean)', () => {
    const first = Array.from(nearestRows(distances, 5000, 300, everyThird));
    nearestRows(distances, 2000, 17, all);
    assert.deepEqual(Array.from(nearestRows(distances, 5000, 300, everyThird)), first);
  });
});
