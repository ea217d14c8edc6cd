// The external database's settings and the job poll interval: defaults, accepted values, and one clear line naming the
// variable for every value that cannot work.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadEngineConfig } from '../src/index.js';
import { itRefusesAtStart } from './helpers/refused-settings.js';

describe('database and job settings', () => {
  it('default to a pool of 10, a 30 s statement timeout and a 5 s job poll', () => {
    const c = loadEngineConfig({});
    assert.deepEqual(c.database, { poolSize: 10, statementTimeoutMs: 30_000 });
    assert.equal(c.jobsPollIntervalMs, 5_000);
  });

  it('accept whole numbers in range, and 0 for no statement timeout', () => {
    const c = loadEngineConfig({
      MNEMOS_API_DATABASE_POOL_SIZE: '40',
      MNEMOS_API_DATABASE_STATEMENT_TIMEOUT_MS: '0',
      MNEMOS_API_JOBS_POLL_INTERVAL_MS: '250',
    });
    assert.deepEqual(c.database, { poolSize: 40, statementTimeoutMs: 0 });
    assert.equal(c.jobsPollIntervalMs, 250);
  });

  itRefusesAtStart([
    ['MNEMOS_API_DATABASE_POOL_SIZE', '0', /between 1 and 1000/],
    ['MNEMOS_API_DATABASE_POOL_SIZE', '1001', /between 1 and 1000/],
    ['MNEMOS_API_DATABASE_POOL_SIZE', 'ten', /must be a number of connections/],
    ['MNEMOS_API_DATABASE_POOL_SIZE', '2.5', /whole number/],
    ['MNEMOS_API_DATABASE_STATEMENT_TIMEOUT_MS', '50', /0 \(no limit\) or between 100/],
    ['MNEMOS_API_DATABASE_STATEMENT_TIMEOUT_MS', '-1', /0 \(no limit\) or between 100/],
    ['MNEMOS_API_DATABASE_STATEMENT_TIMEOUT_MS', 'soon', /number of milliseconds/],
    ['MNEMOS_API_JOBS_POLL_INTERVAL_MS', '99', /between 100 and 3600000/],
    ['MNEMOS_API_JOBS_POLL_INTERVAL_MS', '3600001', /between 100 and 3600000/],
  ]);
});
