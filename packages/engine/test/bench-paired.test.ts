import assert from 'node:assert/strict';
import { test } from 'node:test';
import { measurePair, pairedMedianRatio } from '../bench/paired.js';

test('pairs alternate which side goes first: the base on even pairs, the head on odd ones', async () => {
  const order: string[] = [];
  for (let i = 0; i < 4; i++) {
    const pair = await measurePair(i, async (side) => {
      order.push(side);
      return side === 'base' ? i : 10 + i;
    });
    assert.deepEqual(pair, { base: i, head: 10 + i });
  }
  assert.deepEqual(order, ['base', 'head', 'head', 'base', 'base', 'head', 'head', 'base']);
});

test('the paired ratio of medians is exact when every pair has the same ratio', () => {
  const pairs = Array.from({ length: 50 }, (_, i) => ({ base: 5 + i, head: 2 * (5 + i) }));
  assert.deepEqual(pairedMedianRatio(pairs), { ratio: 2, low: 2, high: 2 });
});

test('the bootstrap interval holds the ratio, narrows with more pairs, and repeats for the same samples', () => {
  // Head 10% slower, with noise that both sides of a pair share (the machine's moment) and some of their own.
  const noisy = (n: number) =>
    Array.from({ length: n }, (_, i) => {
      const moment = 10 + ((i * 37) % 23);
      return { base: moment + ((i * 11) % 5), head: 1.1 * moment + ((i * 7) % 5) };
    });
  const few = pairedMedianRatio(noisy(20));
  const many = pairedMedianRatio(noisy(400));
  for (const r of [few, many]) assert.ok(r.low <= r.ratio && r.ratio <= r.high, JSON.stringify(r));
  assert.ok(many.low > 1 && many.ratio > 1.05 && many.ratio < 1.2, JSON.stringify(many));
  assert.ok(many.high - many.low < few.high - few.low, `${JSON.stringify(many)} against ${JSON.stringify(few)}`);
  assert.deepEqual(pairedMedianRatio(noisy(20)), few);
});

test('no pairs give no ratio', () => {
  assert.ok(Number.isNaN(pairedMedianRatio([]).ratio));
});
