// The gateway's HTTP time limits and body budgets: defaults, derived defaults, and settings that cannot work.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '@mnemos/gateway';

const base = {
  GATEWAY_DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db',
  GATEWAY_ADMIN_TOKEN: 'admin-token-0123456789',
  GATEWAY_ENGINE_URL: 'http://127.0.0.1:8888',
  GATEWAY_ENGINE_TOKEN: 'engine-token',
};

describe('gateway HTTP limits settings', () => {
  it('default to bounded time limits and budgets that hold at least one whole body', () => {
    const { http, maxBodyBytes } = loadConfig(base);
    assert.equal(http.headersTimeoutMs, 20_000);
    assert.equal(http.requestTimeoutMs, 60_000);
    assert.ok(http.perConnectionBodyBytes >= maxBodyBytes);
    assert.ok(http.globalBodyBytes >= 8 * maxBodyBytes);
  });

  it('refuse a headers timeout longer than the request timeout and budgets below one body', () => {
    const refused = (env: Record<string, string>, pattern: RegExp): void => {
      const matches = (e: unknown): boolean => e instanceof ConfigError && pattern.test(e.message);
      assert.throws(() => loadConfig({ ...base, ...env }), matches);
    };
    refused(
      { GATEWAY_HEADERS_TIMEOUT_MS: '5000', GATEWAY_REQUEST_TIMEOUT_MS: '1000' },
      /^GATEWAY_HEADERS_TIMEOUT_MS \(5000\) must not exceed/,
    );
    refused(
      { GATEWAY_MAX_INFLIGHT_BODY_BYTES: '2048' },
      /^GATEWAY_MAX_INFLIGHT_BODY_BYTES \(2048\) must be at least GATEWAY_MAX_BODY_BYTES/,
    );
    refused(
      { GATEWAY_MAX_CONNECTION_BODY_BYTES: '4096' },
      /^GATEWAY_MAX_CONNECTION_BODY_BYTES \(4096\) must be at least/,
    );
    refused({ GATEWAY_REQUEST_TIMEOUT_MS: '10' }, /^GATEWAY_REQUEST_TIMEOUT_MS: /);
  });
});
