import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveTemporal, temporalWindow } from '../src/recall/temporal.js';

/** The time phrases a query may name, resolved against the query time (pure functions: no engine needed). */

const ref = new Date('2023-08-16T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const named = (q: string) => resolveTemporal(q, ref).map((i) => [iso(i.start), iso(i.end), i.kind]);

describe('temporal phrases', () => {
  it('reads calendar dates in their usual English forms', () => {
    assert.deepEqual(named('the 7th of July 2023'), [['2023-07-07', '2023-07-08', 'day']]);
    assert.deepEqual(named('What happened on 2023-07-07?'), [['2023-07-07', '2023-07-08', 'day']]);
    assert.deepEqual(named('Since Jan 5th 2022?'), [['2022-01-05', '2022-01-06', 'day']]);
    assert.deepEqual(named('during sept 2022'), [['2022-09-01', '2022-10-01', 'month']]);
  });

  it('takes a month without a year only after a preposition, as the latest such month', () => {
    assert.deepEqual(named('What did she do in may?'), [['2023-05-01', '2023-06-01', 'month']]);
    assert.deepEqual(named('since last July'), [['2023-07-01', '2023-08-01', 'month']]);
    assert.deepEqual(named('in June 5'), [['2023-06-01', '2023-07-01', 'month']]);
    assert.deepEqual(named('Did June call?'), []);
    assert.deepEqual(named('What did he do on Sunday at 5 pm?'), []);
  });

  it('keeps its own intervals for years and relative expressions', () => {
    assert.deepEqual(named('What did we do in 2022?'), [['2022-01-01', '2023-01-01', 'year']]);
    assert.deepEqual(named('the day before yesterday'), [['2023-08-14', '2023-08-15', 'day']]);
    assert.deepEqual(named('this morning'), [['2023-08-16', '2023-08-17', 'day']]);
    assert.deepEqual(named('tonight'), [['2023-08-16', '2023-08-17', 'day']]);
    assert.deepEqual(named('last weekend'), [['2023-08-02', '2023-08-16', 'week']]);
    assert.deepEqual(named('this week'), [['2023-08-09', '2023-08-17', 'week']]);
    assert.deepEqual(named('this month'), [['2023-08-01', '2023-09-01', 'month']]);
    assert.deepEqual(named('last year'), [['2022-01-01', '2023-01-01', 'year']]);
    assert.deepEqual(named('this year'), [['2023-01-01', '2024-01-01', 'year']]);
    assert.deepEqual(named('3 days ago'), [['2023-08-12', '2023-08-14', 'day']]);
    assert.deepEqual(named('a few days ago'), [['2023-08-12', '2023-08-14', 'day']]);
    assert.deepEqual(named('a couple of months ago'), [['2023-05-31', '2023-07-01', 'month']]);
  });

  it('finds every phrase of a query, each once', () => {
    assert.deepEqual(named('Between May 3, 2023 and yesterday?'), [
      ['2023-05-03', '2023-05-04', 'day'],
      ['2023-08-15', '2023-08-16', 'day'],
    ]);
  });

  it('searches from a week before the earliest interval to a month after the latest', () => {
    const window = temporalWindow(resolveTemporal('yesterday', ref));
    assert.deepEqual(window && [iso(window.from), iso(window.to)], ['2023-08-08', '2023-09-15']);
    assert.equal(temporalWindow([]), undefined);
  });
});
