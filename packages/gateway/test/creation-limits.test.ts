// How fast accounts and OAuth clients may be created: per client address and in all, in windows of the configured
// length, with their settings validated at start. The clock is moved by hand; nothing depends on the machine's speed.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { Problem } from '@mnemos/problems';
import { ConfigError, loadConfig } from '@mnemos/gateway';
import { admitCreation, type CreationLimits } from '../src/creation-limits.js';
import { installRateLimits, type RateLimits } from '../src/ratelimit.js';

const base = {
  GATEWAY_DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db',
  GATEWAY_ADMIN_TOKEN: 'admin-token-0123456789',
  GATEWAY_ENGINE_URL: 'http://127.0.0.1:8888',
  GATEWAY_ENGINE_TOKEN: 'engine-token',
};

describe('creation throttle settings', () => {
  it('default to bounded allowances per address and in all, per hour', () => {
    const { signUps, clientRegistrations } = loadConfig(base);
    assert.deepEqual(signUps, { perAddress: 10, total: 200, windowMs: 3_600_000 });
    assert.deepEqual(clientRegistrations, { perAddress: 30, total: 1000, windowMs: 3_600_000 });
    const set = loadConfig({
      ...base,
      GATEWAY_SIGNUP_MAX_PER_ADDRESS: '2',
      GATEWAY_SIGNUP_MAX_TOTAL: '3',
      GATEWAY_SIGNUP_WINDOW_SECONDS: '60',
      GATEWAY_OAUTH_REGISTRATION_MAX_PER_ADDRESS: '4',
      GATEWAY_OAUTH_REGISTRATION_MAX_TOTAL: '5',
      GATEWAY_OAUTH_REGISTRATION_WINDOW_SECONDS: '120',
    });
    assert.deepEqual(set.signUps, { perAddress: 2, total: 3, windowMs: 60_000 });
    assert.deepEqual(set.clientRegistrations, { perAddress: 4, total: 5, windowMs: 120_000 });
  });

  it('refuse at start, in one line naming the setting, values that cannot work', () => {
    const refused = (env: Record<string, string>, pattern: RegExp): void => {
      const matches = (e: unknown): boolean => e instanceof ConfigError && pattern.test(e.message);
      assert.throws(() => loadConfig({ ...base, ...env }), matches, JSON.stringify(env));
    };
    refused({ GATEWAY_SIGNUP_MAX_PER_ADDRESS: '0' }, /^GATEWAY_SIGNUP_MAX_PER_ADDRESS: /);
    refused({ GATEWAY_SIGNUP_MAX_TOTAL: 'many' }, /^GATEWAY_SIGNUP_MAX_TOTAL: /);
    refused({ GATEWAY_SIGNUP_WINDOW_SECONDS: '1.5' }, /^GATEWAY_SIGNUP_WINDOW_SECONDS: /);
    refused({ GATEWAY_OAUTH_REGISTRATION_MAX_PER_ADDRESS: '-1' }, /^GATEWAY_OAUTH_REGISTRATION_MAX_PER_ADDRESS: /);
    refused({ GATEWAY_OAUTH_REGISTRATION_WINDOW_SECONDS: '0' }, /^GATEWAY_OAUTH_REGISTRATION_WINDOW_SECONDS: /);
    refused(
      { GATEWAY_SIGNUP_MAX_PER_ADDRESS: '50', GATEWAY_SIGNUP_MAX_TOTAL: '20' },
      /^GATEWAY_SIGNUP_MAX_PER_ADDRESS \(50\) must not exceed GATEWAY_SIGNUP_MAX_TOTAL \(20\)/,
    );
    refused(
      { GATEWAY_OAUTH_REGISTRATION_MAX_PER_ADDRESS: '2000' },
      /^GATEWAY_OAUTH_REGISTRATION_MAX_PER_ADDRESS \(2000\) must not exceed GATEWAY_OAUTH_REGISTRATION_MAX_TOTAL/,
    );
  });
});

describe('creation throttle', () => {
  let app: FastifyInstance;
  let limiter: RateLimits;
  const limits: CreationLimits = { perAddress: 2, total: 3, windowMs: 3_600_000 };
  const from = (ip: string): FastifyRequest => ({ ip, routeOptions: { config: {} } }) as unknown as FastifyRequest;
  const refusal = async (ip: string): Promise<Problem | undefined> => {
    try {
      await admitCreation(limiter, from(ip), 'signUps', limits);
      return undefined;
    } catch (error) {
      if (error instanceof Problem) return error;
      throw error;
    }
  };

  beforeEach(async () => {
    mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-01-01T00:00:00Z') });
    app = Fastify();
    limiter = await installRateLimits(app);
    await app.ready();
  });
  afterEach(async () => {
    mock.timers.reset();
    await app.close();
  });

  it('admits an address its allowance, then answers 429 with Retry-After until the window ends', async () => {
    assert.equal(await refusal('203.0.113.1'), undefined);
    assert.equal(await refusal('203.0.113.1'), undefined);
    mock.timers.tick(10 * 60_000);
    const refused = await refusal('203.0.113.1');
    assert.equal(refused?.status, 429);
    assert.equal(refused?.code, 'rate_limited');
    assert.equal(refused?.headers?.['retry-after'], String(50 * 60));
    assert.match(refused?.detail ?? '', /^Too many sign-ups from this address \(2 per hour\); retry in 3000 s\.$/);
    mock.timers.tick(50 * 60_000);
    assert.equal(await refusal('203.0.113.1'), undefined, 'a new window admits again');
  });

  it('counts every address together against the total, and a refused address uses none of it', async () => {
    for (let i = 0; i < 5; i++) await refusal('203.0.113.1');
    assert.equal(await refusal('203.0.113.2'), undefined, 'one refused address does not spend the total');
    const total = await refusal('203.0.113.3');
    assert.equal(total?.status, 429);
    assert.match(total?.detail ?? '', /^This server takes at most 3 sign-ups per hour from everyone together/);
  });

  it('counts an IPv6 address by its /64, which one host usually holds whole', async () => {
    assert.equal(await refusal('2001:db8:1:2::1'), undefined);
    assert.equal(await refusal('2001:db8:1:2::ffff:1'), undefined);
    assert.equal((await refusal('2001:db8:1:2:aaaa::9'))?.status, 429);
    assert.equal(await refusal('2001:db8:1:3::1'), undefined, 'another /64 is another address');
  });
});
