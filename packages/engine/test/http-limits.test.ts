import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadEngineConfig } from '../src/index.js';

/** The HTTP time limits and body budgets: defaults, derived defaults, and settings that cannot work. */
describe('HTTP limits settings', () => {
  it('default to bounded time limits and budgets that hold at least one whole body', () => {
    const { http, maxBodyBytes } = loadEngineConfig({});
    assert.equal(http.headersTimeoutMs, 20_000);
    assert.equal(http.requestTimeoutMs, 60_000);
    assert.ok(http.perConnectionBodyBytes >= maxBodyBytes);
    assert.ok(http.globalBodyBytes >= 8 * maxBodyBytes);
    const big = loadEngineConfig({ MNEMOS_API_MAX_BODY_BYTES: String(32 * 1024 * 1024) }).http;
    assert.equal(big.perConnectionBodyBytes, 32 * 1024 * 1024);
    assert.equal(big.globalBodyBytes, 8 * 32 * 1024 * 1024);
  });

  it('refuse a headers timeout longer than the request timeout, budgets below one body, and non-numbers', () => {
    const refused = (env: Record<string, string>, pattern: RegExp): void => {
      assert.throws(
        () => loadEngineConfig(env),
        (e: unknown) => e instanceof ConfigError && pattern.test(e.message),
      );
    };
    refused(
      { MNEMOS_API_HEADERS_TIMEOUT_MS: '5000', MNEMOS_API_REQUEST_TIMEOUT_MS: '1000' },
      /^MNEMOS_API_HEADERS_TIMEOUT_MS \(5000\) must not exceed/,
    );
    refused(
      { MNEMOS_API_MAX_INFLIGHT_BODY_BYTES: '2048' },
      /^MNEMOS_API_MAX_INFLIGHT_BODY_BYTES \(2048\) must be at least MNEMOS_API_MAX_BODY_BYTES/,
    );
    refused(
      { MNEMOS_API_MAX_CONNECTION_BODY_BYTES: '4096' },
      /^MNEMOS_API_MAX_CONNECTION_BODY_BYTES \(4096\) must be at least/,
    );
    refused(
      { MNEMOS_API_REQUEST_TIMEOUT_MS: 'soon' },
      /^MNEMOS_API_REQUEST_TIMEOUT_MS must be a number of milliseconds/,
    );
    refused(
      { MNEMOS_API_HEADERS_TIMEOUT_MS: '10' },
      /^MNEMOS_API_HEADERS_TIMEOUT_MS must be between 100 and 600000 ms/,
    );
  });
});
