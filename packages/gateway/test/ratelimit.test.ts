import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { installRateLimits, WINDOW_MS, type RateLimits } from '../src/ratelimit.js';

// The library reads Date.now(); the clock is moved by hand so no assertion depends on how fast the machine runs.
describe('per-minute rate limits', () => {
  let app: FastifyInstance;
  let limits: RateLimits;
  const request = (): FastifyRequest => ({ routeOptions: { config: {} } }) as unknown as FastifyRequest;

  beforeEach(async () => {
    mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-01-01T00:00:00Z') });
    app = Fastify();
    limits = await installRateLimits(app);
    await app.ready();
  });

  afterEach(async () => {
    mock.timers.reset();
    await app.close();
  });

  it('admits the allowance within a minute, then refuses until the window ends', async () => {
    for (let i = 0; i < 3; i++) assert.equal(await limits.take(request(), 'key-a', 3), 0, `request ${i + 1}`);
    mock.timers.tick(15_000);
    assert.equal(await limits.take(request(), 'key-a', 3), 45);
    assert.equal(await limits.take(request(), 'key-b', 3), 0, 'another key has its own allowance');
    mock.timers.tick(WINDOW_MS - 15_000);
    assert.equal(await limits.take(request(), 'key-a', 3), 0, 'a new window admits again');
  });

  it('never refuses with a wait under one second', async () => {
    assert.equal(await limits.take(request(), 'key', 1), 0);
    mock.timers.tick(WINDOW_MS - 1);
    assert.equal(await limits.take(request(), 'key', 1), 1);
  });

  it('a zero allowance refuses for a whole window', async () => {
    assert.equal(await limits.take(request(), 'key', 0), 60);
    assert.equal(await limits.wait(request(), 'key', 0), 60);
  });

  it('wait looks without counting, and says when the allowance is used up', async () => {
    for (let i = 0; i < 5; i++) assert.equal(await limits.wait(request(), 'failures', 2), 0);
    await limits.take(request(), 'failures', 2);
    assert.equal(await limits.wait(request(), 'failures', 2), 0, 'one of two used');
    await limits.take(request(), 'failures', 2);
    mock.timers.tick(10_000);
    assert.equal(await limits.wait(request(), 'failures', 2), 50, 'both used: wait for the window to end');
    mock.timers.tick(50_000);
    assert.equal(await limits.wait(request(), 'failures', 2), 0);
  });

  it('counts in the window asked for, such as an hour, and says when that window ends', async () => {
    const hour = 3_600_000;
    for (let i = 0; i < 2; i++) assert.equal(await limits.take(request(), 'hourly', 2, hour), 0);
    mock.timers.tick(15 * 60_000);
    assert.equal(await limits.wait(request(), 'hourly', 2, hour), 45 * 60);
    assert.equal(await limits.take(request(), 'hourly', 2, hour), 45 * 60, 'refused past a minute, within the hour');
    mock.timers.tick(45 * 60_000);
    assert.equal(await limits.take(request(), 'hourly', 2, hour), 0, 'the next hour admits again');
  });

  it('a raised allowance takes effect within the same window', async () => {
    for (let i = 0; i < 2; i++) await limits.take(request(), 'key', 2);
    assert.ok((await limits.take(request(), 'key', 2)) > 0);
    assert.equal(await limits.take(request(), 'key', 10), 0);
  });
});
