import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NEAR_COPY_JACCARD, NearCopyIndex, wordSignature } from '../src/recall/near-copy.js';

/** The definition the index must match: Jaccard of the two word sets at or above the threshold. */
function nearCopy(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size === 0 && b.size === 0) return true;
  const shared = [...a].filter((w) => b.has(w)).length;
  return shared / (a.size + b.size - shared) >= NEAR_COPY_JACCARD;
}

/** The signature of a set of words (their order does not matter). */
const signature = (words: Set<string>) => wordSignature([...words].join(' '));

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
          words = new Set(
            Array.from({ length: 1 + Math.floor(r() * 30) }, () => vocabulary[Math.floor(r() * vocabulary.length)]!),
          );
        }
        // Brute force over the words themselves; the index works on hash signatures.
        const expected = kept.some((k) => nearCopy(k, words));
        assert.equal(index.has(signature(words)), expected, `round ${round}, candidate ${n}: ${[...words].join(' ')}`);
        assert.equal(admitting.admit(signature(words)), !expected, `admit, round ${round}, candidate ${n}`);
        if (expected) copies++;
        else {
          kept.push(words);
          index.add(signature(words));
        }
      }
      assert.ok(copies > 0, 'the generator produced near-copies to find');
    }
  });

  it('finds copies that differ only in case and punctuation, and not different texts', () => {
    const index = new NearCopyIndex();
    index.add(wordSignature('Alice painted the garden shed on Monday because it was on sale.'));
    assert.equal(index.has(wordSignature('alice painted the garden shed, on monday, because it was on sale!')), true);
    assert.equal(index.has(wordSignature('Bruno painted the garden shed on Monday because it was on sale.')), false);
    assert.equal(index.has(wordSignature('...')), false);
    index.add(wordSignature(''));
    assert.equal(index.has(wordSignature('?!')), true, 'two texts without words are copies of each other');
    // A signature holds each word once, sorted by hash: repeats and word order change nothing.
    assert.deepEqual(wordSignature('the cat saw the cat'), wordSignature('saw cat the'));
    assert.equal(wordSignature('the cat saw the cat').length, 3);
  });
});
