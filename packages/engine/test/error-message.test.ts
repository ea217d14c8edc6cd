// The one way the engine reads the message of anything thrown (util/error-message.ts), used in its logs, its one-line
// start-up errors and the reasons it reports.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { errorMessage } from '../src/util/error-message.js';

it('reads an Error by its message and any other thrown value as its string, never as "undefined"', () => {
  assert.equal(errorMessage(new Error('connection refused')), 'connection refused');
  assert.equal(errorMessage(Object.assign(new TypeError('bad'), { code: 'X' })), 'bad');
  assert.equal(errorMessage('the LLM said no'), 'the LLM said no');
  assert.equal(errorMessage(42), '42');
  assert.equal(errorMessage({ toString: () => 'a rejected plain object' }), 'a rejected plain object');
});
