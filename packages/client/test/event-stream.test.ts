// The client's server-sent event reader against the framing rules: pieces split anywhere, CR/LF/CRLF line ends,
// comments, multi-line data, unnamed events and events without data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventStreamReader } from '../src/event-stream.js';

test('events split across pieces at every position come out whole and in order', () => {
  const text = 'event: delta\ndata: {"text":"Hel"}\n\n: a comment\nevent: done\ndata: {"text":"Hello"}\n\n';
  for (let cut = 0; cut <= text.length; cut++) {
    const reader = new EventStreamReader();
    const events = [...reader.push(text.slice(0, cut)), ...reader.push(text.slice(cut))];
    assert.deepEqual(events, [
      { event: 'delta', data: '{"text":"Hel"}' },
      { event: 'done', data: '{"text":"Hello"}' },
    ]);
  }
});

test('CR, LF and CRLF end lines; data lines join with LF; unnamed events are messages; empty events are dropped', () => {
  const reader = new EventStreamReader();
  const events = reader.push('data: one\r\ndata:two\r\rdata: x\n\nevent: ping\n\nevent: e\rdata\r\n\r');
  assert.deepEqual(events, [
    { event: 'message', data: 'one\ntwo' },
    { event: 'message', data: 'x' },
  ]);
  // The lone CR at the end might begin a CRLF: the event comes with the next piece.
  assert.deepEqual(reader.push('\n'), [{ event: 'e', data: '' }]);
});
