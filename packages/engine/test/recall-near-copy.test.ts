import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NearCopyIndex } from '../src/recall/near-copy.js';
import { nearCopy, wordSet } from '../src/recall/signals.js';

/** A deterministic generator, so a failure names a reproducible case. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

describe('near-copy index', () => {
  it('answers exactly like comparing with every kept set', () => {
    const r = rng(7);
    const vocabulary = Array.from({ length: 60 }, (_, i) => `w${i}`);
    for (let round = 0; round < 40; round++) {
      const index = new NearCopyIndex();
      // What recall uses: one call that checks and adds.
      const admitting = new NearCopyIndex();
      const kept: Array<Set<string>> = [];
      let copies = 0;
      for (let n = 0; n < 80; n++) {
        // Half the candidates are edits of a kept set (a word or two swapped, dropped or added), the rest fresh.
        let words: Set<string>;
        const base = kept[Math.floor(r() * kept.length)];
        if (base && r() < 0.5) {
          words = new Set(base);
          const edits = Math.floor(r() * 3);
          for (let e = 0; e < edits; e++) {
            if (r() < 0.5) words.delete([...words][Math.floor(r() * words.size)]!);
            else words.add(vocabulary[Math.floor(r() * vocabulary.length)]!);
          }
        } else {
          words = new Set(Array.from({ length: 1 + Math.floor(r() * 30) }, () => vocabulary[Math.floor(r() * vocabulary.length)]!));
        }
        const expected = kept.some((k) => nearCopy(k, words));
        assert.equal(index.has(words), expected, `round ${round}, candidate ${n}: ${[...words].join(' ')}`);
        assert.equal(admitting.admit(words), !expected, `admit, round ${round}, candidate ${n}`);
        if (expected) copies++;
        else {
          kept.push(words);
          index.add(words);
        }
      }
      assert.ok(copies > 0, 'the generator produced near-copies to find');
    }
  });

  it('finds copies that differ only in case and punctuation, and not different texts', () => {
    const index = new NearCopyIndex();
    index.add(wordSet('Alice painted the garden shed on Monday because it was on sale.'));
    assert.equal(index.has(wordSet('alice painted the garden shed, on monday, because it was on sale!')), true);
    assert.equal(index.has(wordSet('Bruno painted the garden shed on Monday because it was on sale.')), false);
    assert.equal(index.has(new Set()), false);
    index.add(new Set());
    assert.equal(index.has(new Set()), true, 'two texts without words are copies of each other');
  });
});
