// The bank's keyword index in typed arrays (term-index.ts) through BankVectors: exact document frequencies, each
// matching row once, counts read back, and removals (lazy, with row reuse and rebuilds) never leaving a stale match.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BankVectors } from '../src/vectors/kernels/bank-vectors.js';
import { postingRow, TermIndex } from '../src/vectors/kernels/term-index.js';
import { indexRow } from './helpers/index-row.js';

const terms = (...pairs: Array<[string, number]>) => new Map(pairs);
const unit = (i: number) => Float32Array.from({ length: 8 }, (_, j) => (j === i % 8 ? 1 : 0));

describe('keyword index in typed arrays', () => {
  it('matches each row once, with its counts of the scoring terms, in posting order', () => {
    const bank = new BankVectors(8);
    bank.upsert(indexRow('a', 3), terms(['cat', 2], ['grey', 1]), unit(0));
    bank.upsert(indexRow('b', 2), terms(['dog', 1], ['grey', 1]), unit(1));
    bank.upsert(indexRow('c', 1), terms(['fish', 1]), unit(2));
    assert.equal(bank.documentFrequency('grey'), 2);
    assert.equal(bank.documentFrequency('unknown'), 0);
    const found = bank.matching(['cat', 'grey'], ['cat', 'grey', 'fish'], () => true);
    assert.deepEqual(
      found.rows.map((m) => m.id),
      ['a', 'b'],
    );
    assert.deepEqual([...found.counts], [2, 1, 0, 0, 1, 0]);
    assert.deepEqual(
      bank.matching(['grey'], ['grey'], (m) => m.id !== 'a').rows.map((m) => m.id),
      ['b'],
    );
    const doc = bank.keywordDoc('a')!;
    assert.deepEqual(
      [doc.length, doc.get('cat'), doc.get('dog'), [...doc.terms()]],
      [
        3,
        2,
        0,
        [
          ['cat', 2],
          ['grey', 1],
        ],
      ],
    );
  });

  it("forgets a removed or replaced memory's terms, also when its row is reused", () => {
    const bank = new BankVectors(8);
    bank.upsert(indexRow('a', 1), terms(['cat', 1]), unit(0));
    bank.upsert(indexRow('b', 1), terms(['dog', 1]), unit(1));
    bank.remove('a');
    assert.equal(bank.size, 1);
    assert.equal(bank.documentFrequency('cat'), 0);
    // The new memory takes the freed row; the old posting for "cat" must not match it.
    bank.upsert(indexRow('c', 1), terms(['owl', 1]), unit(2));
    assert.deepEqual(bank.matching(['cat'], ['cat'], () => true).rows, []);
    assert.deepEqual(
      bank.matching(['owl', 'dog'], ['owl'], () => true).rows.map((m) => m.id),
      ['c', 'b'],
    );
    // Replacing a memory's terms (an edit) moves it from one term to the other.
    bank.upsert(indexRow('b', 1), terms(['cat', 1]), unit(1));
    assert.deepEqual([bank.documentFrequency('dog'), bank.documentFrequency('cat')], [0, 1]);
    assert.deepEqual(
      bank.matching(['dog', 'cat'], ['cat'], () => true).rows.map((m) => m.id),
      ['b'],
    );
    // The scan skips the hole a removal leaves.
    bank.remove('c');
    const top = new (class {
      ids: string[] = [];
      wouldTake() {
        return true;
      }
      offer(id: string) {
        this.ids.push(id);
      }
    })();
    bank.search(unit(2), 10, () => true, top as never);
    assert.deepEqual(top.ids, ['b']);
  });

  it('stays exact through many removals (stale postings rebuilt, arena compacted)', () => {
    const index = new TermIndex();
    const live = new Map<number, Map<string, number>>();
    let seed = 7;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let step = 0; step < 20_000; step++) {
      const row = rand(300);
      if (live.has(row)) {
        index.remove(row);
        live.delete(row);
      } else {
        const t = new Map(Array.from({ length: 1 + rand(6) }, () => [`t${rand(40)}`, 1 + rand(3)] as [string, number]));
        index.add(row, t);
        live.set(row, t);
      }
    }
    for (let k = 0; k < 40; k++) {
      const term = `t${k}`;
      const holders = [...live]
        .filter(([, t]) => t.has(term))
        .map(([row]) => row)
        .sort((a, b) => a - b);
      assert.equal(index.documentFrequency(term), holders.length, term);
      const id = index.numberOf(term);
      const seen = new Set<number>();
      const p = index.postingsOf(id);
      for (let k = 0; p && id !== undefined && k < p.size; k++) {
        const w = p.words[k]!;
        if (index.postingCount(w, id) > 0) seen.add(postingRow(w));
      }
      assert.deepEqual(
        [...seen].sort((a, b) => a - b),
        holders,
        term,
      );
      for (const row of holders) assert.equal(index.countIn(row, id), live.get(row)!.get(term));
    }
  });
});
