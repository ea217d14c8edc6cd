// Which query terms select the keyword arm's rows: every term but the common ones in a bank of ordinary size, and in
// a very large bank the rarest while their rows fit the budget, so the arm's work stays bounded on both tiers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COMMON_TERM_SHARE, KEYWORD_SELECT_ROWS, keywordPlan } from '../src/recall/arms.js';

describe('the keyword plan', () => {
  it('selects with every term held by at most the common share, in query order', () => {
    const df = new Map([
      ['alic', 40],
      ['lisbon', 12],
      ['move', 9_000],
    ]);
    const plan = keywordPlan(['move', 'alic', 'lisbon', 'unseen'], df, 10_000);
    assert.deepEqual(plan?.present, ['move', 'alic', 'lisbon']);
    assert.ok(9_000 > COMMON_TERM_SHARE * 10_000);
    assert.deepEqual(plan?.selective, ['alic', 'lisbon']);
  });

  it('selects with the rarest term alone when every term is common', () => {
    const df = new Map([
      ['say', 800],
      ['like', 600],
    ]);
    assert.deepEqual(keywordPlan(['say', 'like'], df, 1_000)?.selective, ['like']);
  });

  it('in a very large bank, selects with the rarest terms while their rows fit the budget', () => {
    const total = 1_000_000;
    const df = new Map([
      ['garden', KEYWORD_SELECT_ROWS / 2],
      ['tomato', KEYWORD_SELECT_ROWS / 4],
      ['water', KEYWORD_SELECT_ROWS],
      ['basil', 30],
    ]);
    const plan = keywordPlan(['garden', 'water', 'tomato', 'basil'], df, total);
    assert.deepEqual(plan?.selective, ['garden', 'tomato', 'basil'], 'water would pass the budget');
    assert.deepEqual(plan?.present, ['garden', 'water', 'tomato', 'basil'], 'every term still scores');
    const alone = keywordPlan(['water'], new Map([['water', 5 * KEYWORD_SELECT_ROWS]]), total);
    assert.deepEqual(alone?.selective, ['water'], 'the rarest term selects even past the budget');
  });

  it('answers nothing when no memory holds any term', () => {
    assert.equal(keywordPlan(['unseen'], new Map(), 100), undefined);
  });
});
