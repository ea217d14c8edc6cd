// The error catalogue: every code keeps one status, every message fills in its parameters, and a problem's document
// is the problem+json body both servers send.
import assert from 'node:assert/strict';
import { STATUS_CODES } from 'node:http';
import { describe, it } from 'node:test';
import { CATALOGUE, invalidField, messageOf, Problem, problem, type ProblemCode } from '../src/index.js';

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
