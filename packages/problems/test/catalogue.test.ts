// The error catalogue: every code keeps one status, every message fills in its parameters, and a problem's document
// is the problem+json body both servers send.
import assert from 'node:assert/strict';
import { STATUS_CODES } from 'node:http';
import { describe, it } from 'node:test';
import {
  CATALOGUE,
  documentProblems,
  invalidField,
  messageOf,
  Problem,
  problem,
  type ProblemCode,
} from '../src/index.js';

describe('the catalogue', () => {
  it('gives every code an HTTP error status with a standard title, and at least one message', () => {
    for (const [code, entry] of Object.entries(CATALOGUE)) {
      assert.match(code, /^[a-z][a-z_]*[a-z]$/, code);
      assert.ok(entry.status >= 400 && entry.status < 600, `${code}: ${entry.status}`);
      assert.ok(STATUS_CODES[entry.status], `${code}: ${entry.status} has no standard title`);
      assert.ok(Object.keys(entry.messages).length > 0, code);
    }
  });

  it('fills a message in with its parameters', () => {
    assert.equal(
      messageOf('bank_not_found', 'notCreated', { bankId: 'alice' }),
      'Bank "alice" does not exist; create it with PUT first.',
    );
    assert.equal(
      messageOf('validation_failed', 'unknownMemoryType', { type: 'x', allowed: ['raw', 'world'] }),
      'Unknown memory type "x"; use one of raw, world.',
    );
  });

  it('holds the gateway codes with the statuses the gateway answers', () => {
    const gateway: Array<[ProblemCode, number]> = [
      ['forbidden', 403],
      ['insufficient_scope', 403],
      ['rate_limited', 429],
      ['quota_exceeded', 429],
      ['account_exists', 409],
      ['engine_unavailable', 503],
      ['engine_error', 502],
      ['database_unavailable', 503],
      ['starting', 503],
      ['engine_timeout', 504],
    ];
    for (const [code, status] of gateway) assert.equal(CATALOGUE[code].status, status, code);
  });

  it('fills the gateway messages in, each one line ending in a full stop', () => {
    const samples = [
      messageOf('rate_limited', 'credential', { perMinute: 3, wait: 20 }),
      messageOf('forbidden', 'outsideBanks', { bank: 'b9' }),
      messageOf('insufficient_scope', 'grantUnheld', { missing: ['memory:delete', 'mcp'] }),
      messageOf('quota_exceeded', 'used', {
        used: 5,
        limit: 5,
        metric: 'recalls',
        period: '2026-01',
        needed: 2,
        resetsAt: '2026-02-01T00:00:00.000Z',
      }),
      messageOf('signin_throttled', 'paused', { minutes: 1, at: '10:15' }),
      messageOf('weak_password', 'tooShort', { min: 10 }),
      messageOf('engine_timeout', 'tooSlow'),
    ];
    for (const text of samples) assert.match(text, /^[^\n]+\.$/, text);
    assert.match(samples[0] ?? '', /limited to 3 requests per minute; retry in 20 s/);
    assert.match(samples[2] ?? '', /it lacks memory:delete, mcp/);
    assert.match(samples[3] ?? '', /used 5 of its 5 recalls for 2026-01 and this request needs 2/);
    assert.match(samples[4] ?? '', /Try again in 1 minute \(at 10:15 UTC\)/);
  });

  it("keeps caller-written sentences only where the text is not the catalogue's to know", () => {
    const withStated = Object.entries(CATALOGUE)
      .filter(([, entry]) => 'stated' in entry.messages)
      .map(([code]) => code)
      .sort();
    assert.deepEqual(withStated, ['database_unavailable', 'payload_too_large', 'request_timeout']);
  });
});

describe('documentProblems', () => {
  it('groups the codes by status for the responses and lists each code once', () => {
    const documented = documentProblems(['unauthorized', 'forbidden', 'insufficient_scope', 'unauthorized']);
    assert.deepEqual(documented.codes, ['unauthorized', 'forbidden', 'insufficient_scope']);
    assert.deepEqual(documented.responses, {
      401: {
        description: 'Problem: unauthorized',
        content: { 'application/problem+json': { schema: { $ref: 'Problem#' } } },
      },
      403: {
        description: 'Problem: forbidden, insufficient_scope',
        content: { 'application/problem+json': { schema: { $ref: 'Problem#' } } },
      },
    });
  });
});

describe('problem', () => {
  it('builds the RFC 9457 document with the code as the last segment of its type', () => {
    const p = problem(
      'llm_unavailable',
      'unavailable',
      { reason: 'Connection refused.' },
      {
        headers: { 'retry-after': '5' },
      },
    );
    assert.ok(p instanceof Problem && p instanceof Error);
    assert.deepEqual(p.document(), {
      type: 'https://mnemos.dev/problems/llm_unavailable',
      title: 'Service Unavailable',
      status: 503,
      detail: 'The LLM is unavailable: Connection refused. Try again shortly.',
      code: 'llm_unavailable',
    });
    assert.deepEqual(p.headers, { 'retry-after': '5' });
    assert.equal(p.message, p.detail);
  });

  it('takes options after a message without parameters', () => {
    const p = problem('unauthorized', 'missingToken', { headers: { 'www-authenticate': 'Bearer' } });
    assert.equal(p.status, 401);
    assert.deepEqual(p.headers, { 'www-authenticate': 'Bearer' });
    assert.match(p.detail, /Authorization: Bearer/);
  });

  it('names an invalid field in the detail and in errors', () => {
    const p = invalidField('/items/0/content', 'must not be empty');
    assert.equal(p.code, 'validation_failed');
    assert.equal(p.detail, 'The request body is invalid: /items/0/content must not be empty.');
    assert.deepEqual(p.document()['errors'], [{ pointer: '/items/0/content', detail: 'must not be empty' }]);
  });

  it('keeps the 4xx status a framework chose for its own client errors, and extra members', () => {
    const p = problem('bad_request', 'framework', { reason: 'URI too long' }, { status: 414, extra: { hint: 'x' } });
    assert.equal(p.document().status, 414);
    assert.equal(p.document().title, 'URI Too Long');
    assert.equal(p.document()['hint'], 'x');
  });
});
