import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { BinaryCodes } from '../src/vectors/kernels/binary-codes.js';
import { CompactBank } from '../src/vectors/kernels/compact-bank.js';
import { ResidualBits, ResidualLevels } from '../src/vectors/kernels/residual-bits.js';

/** A seeded generator (mulberry32), so every run draws the same vectors. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Unit vectors around a common direction, as a bank's embeddings lie. */
function unitVectors(count: number, dimension: number, seed: number): Float32Array[] {
  const next = random(seed);
  const common = Float32Array.from({ length: dimension }, () => next() - 0.5);
  return Array.from({ length: count }, () => {
    const v = Float32Array.from({ length: dimension }, (_, j) => common[j]! + 2 * (next() - 0.5));
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
};

describe('two-bit codes', () => {
  it('learn a center, thresholds and four levels a dimension from a sample', () => {
    const sample = [-3, -1, 1, 3, 0.5, -0.5].map((x) => Float32Array.of(x, 2 * x + 1));
    const levels = ResidualLevels.learn(sample)!;
    [0, 1].forEach((want, j) => assert.ok(Math.abs(levels.center[j]! - want) < 1e-6, `center ${j}`));
    const sigma = Math.sqrt((9 + 1 + 1 + 9 + 0.25 + 0.25) / 6);
    assert.ok(Math.abs(levels.thresholds[0]! - 1.2 * sigma) < 1e-6);
    assert.ok(Math.abs(levels.thresholds[1]! - 2.4 * sigma) < 1e-5);
    // Cells: below and near, above and near, below and far, above and far.
    const first = Array.from(levels.levels.slice(0, 4));
    [-0.75, 0.75, -3, 3].forEach((want, cell) => assert.ok(Math.abs(first[cell]! - want) < 1e-6, `cell ${cell}`));
    assert.equal(ResidualLevels.learn([]), undefined);
  });

  for (const dimension of [384, 100]) {
    it(`score a vector lying on its levels exactly as its dot product with the query (${dimension} dimensions)`, () => {
      const levels = ResidualLevels.learn(unitVectors(500, dimension, 1))!;
      const signs = BinaryCodes.create(dimension, 8, levels.center);
      const bits = new ResidualBits(levels, 8);
      const next = random(2);
      const offsets: Float32Array[] = [];
      for (let row = 0; row < 8; row++) {
        // Each component at one of its dimension's four levels, picked at random.
        const offset = Float32Array.from(
          { length: dimension },
          (_, j) => levels.levels[4 * j + Math.floor(4 * next())]!,
        );
        const vector = offset.map((x, j) => x + levels.center[j]!);
        signs.set(row, vector);
        bits.set(row, vector);
        offsets.push(offset);
      }
      const query = unitVectors(1, dimension, 3)[0]!;
      const rows = [5, 0, 7, 2];
      const scores = bits.scores(query, rows, signs.codes, signs.bytesPerCode);
      rows.forEach((row, i) => assert.ok(Math.abs(scores[i]! - dot(query, offsets[row]!)) < 1e-9, `row ${row}`));
    });
  }

  it('rank candidates nearer their exact order than the sign bits alone do', () => {
    const dimension = 384;
    const vectors = unitVectors(2000, dimension, 4);
    const levels = ResidualLevels.learn(vectors.slice(0, 500))!;
    const signs = BinaryCodes.create(dimension, vectors.length, levels.center);
    const bits = new ResidualBits(levels, vectors.length);
    vectors.forEach((v, row) => {
      signs.set(row, v);
      bits.set(row, v);
    });
    const rows = Array.from(vectors.keys());
    let twoBit = 0;
    let oneBit = 0;
    for (const query of unitVectors(20, dimension, 5)) {
      const exact = new Set([...rows].sort((a, b) => dot(query, vectors[b]!) - dot(query, vectors[a]!)).slice(0, 20));
      const estimated = bits.scores(query, rows, signs.codes, signs.bytesPerCode);
      const bySign = signs.signedDots(query, rows);
      const top = (scores: Float64Array) => [...rows].sort((a, b) => scores[b]! - scores[a]!).slice(0, 40);
      twoBit += top(estimated).filter((r) => exact.has(r)).length;
      oneBit += top(bySign).filter((r) => exact.has(r)).length;
    }
    assert.ok(twoBit > oneBit, `two-bit codes keep ${twoBit} of the exact top 20s, sign bits ${oneBit}`);
    assert.ok(twoBit >= 0.8 * 20 * 20, `two-bit codes keep ${twoBit} of 400`);
  });
});

describe('a compact copy narrowing its nearest codes', () => {
  it('keeps the candidates whose two-bit codes score best, or the first ones without levels', () => {
    const dimension = 384;
    const vectors = unitVectors(300, dimension, 6);
    const levels = ResidualLevels.learn(vectors)!;
    const withLevels = new CompactBank(dimension, levels, 16);
    const without = new CompactBank(dimension, undefined, 16);
    for (const bank of [withLevels, without]) {
      vectors.forEach((v) =>
        bank.upsert(
          {
            id: randomUUID(),
            space: 'default',
            type: 'raw',
            valid: true,
            tags: [],
            occurredAt: null,
            expiresAt: null,
            length: 1,
            validFrom: 0,
            validTo: null,
          },
          new Map(),
          v,
        ),
      );
    }
    const query = unitVectors(1, dimension, 7)[0]!;
    const candidates = Int32Array.from({ length: 300 }, (_, i) => i);
    assert.deepEqual(Array.from(without.refine(query, candidates, 5)), [0, 1, 2, 3, 4]);
    const kept = Array.from(withLevels.refine(query, candidates, 30));
    assert.equal(kept.length, 30);
    const exactBest = [...candidates].sort((a, b) => dot(query, vectors[b]!) - dot(query, vectors[a]!)).slice(0, 10);
    const found = exactBest.filter((r) => kept.includes(r)).length;
    assert.ok(found >= 9, `${found} of the exact best 10 among the 30 kept`);
  });
});
