// nthSmallest: the k-th value without sorting, checked against sorting on inputs with many ties.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nthSmallest } from '../src/util/select.js';

describe('nthSmallest', () => {
  it('gives the value sorting would put at each index, ties and order of input notwithstanding', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const inputs = [
      Float64Array.from({ length: 1000 }, () => random() * 10),
      Float64Array.from({ length: 500 }, () => Math.floor(random() * 4)), // a few distinct values, many ties
      Float64Array.from({ length: 300 }, (_, i) => i), // sorted
      Float64Array.from({ length: 300 }, (_, i) => -i), // reverse sorted
      Float64Array.from({ length: 64 }, () => 2.5), // all equal
      Float64Array.of(3),
    ];
    for (const values of inputs) {
      const before = Float64Array.from(values);
      const sorted = Float64Array.from(values).sort();
      for (let n = 0; n < values.length; n += Math.max(1, Math.floor(values.length / 37))) {
        assert.equal(nthSmallest(values, n), sorted[n], `index ${n} of ${values.length}`);
      }
      assert.equal(nthSmallest(values, values.length - 1), sorted[values.length - 1]);
      assert.deepEqual(values, before, 'the input is left as it was');
    }
    assert.throws(() => nthSmallest(Float64Array.of(1, 2), 2), RangeError);
    assert.throws(() => nthSmallest(new Float64Array(0), 0), RangeError);
  });
});
