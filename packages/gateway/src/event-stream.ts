import { Transform, type Readable } from 'node:stream';
import { createParser } from 'eventsource-parser';

/** Whether an engine answer is a server-sent event stream (a streamed reflect). */
export const isEventStream = (headers: Record<string, string>): boolean =>
  (headers['content-type'] ?? '').startsWith('text/event-stream');

/** How an answer's passing on ended: whether all of it passed (`ended`) and whether the engine's side broke. */
interface Passage {
  ended: boolean;
  broke: boolean;
}

/**
 * Passes an answer body on unchanged, chunk by chunk, showing each chunk to `look` before it goes on; `finish` learns
 * once how the passing ended: the body ended, the engine's side broke, or the caller left (the answer closes early).
 */
function passOn(body: Readable, look: (chunk: Buffer) => void, finish: (passage: Passage) => void): Readable {
  const passage: Passage = { ended: false, broke: false };
  let finished = false;
  const done = (): void => {
    if (finished) return;
    finished = true;
    finish(passage);
  };
  const watched = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      look(chunk);
      callback(null, chunk);
    },
    flush(callback) {
      passage.ended = true;
      done();
      callback();
    },
  });
  watched.once('close', done);
  body.once('error', (error) => {
    passage.broke = true;
    watched.destroy(error);
  });
  watched.once('close', () => body.destroy());
  return body.pipe(watched);
}

/**
 * Passes a streamed reflect on while watching its events. `settle` learns whether the answer reached the caller: a
 * `delta` or the `done` event passed on. A stream that ends with an `error` event, or breaks on the engine's side,
 * failed and reached the caller as no answer; a caller who leaves before the first delta received nothing.
 */
export function watchStreamedAnswer(body: Readable, settle: (reached: boolean) => void): Readable {
  let answered = false;
  let failed = false;
  const decoder = new TextDecoder();
  const parser = createParser({
    onEvent: (event) => {
      if (event.event === 'delta' || event.event === 'done') answered = true;
      else if (event.event === 'error') failed = true;
    },
  });
  const look = (chunk: Buffer): void => parser.feed(decoder.decode(chunk, { stream: true }));
  return passOn(body, look, ({ broke }) => settle(answered && !failed && !broke));
}

/**
 * Passes a whole answer (JSON) on. `settle` learns whether it started reaching the caller: a chunk of it passed on, or
 * all of it (an empty body) did; not when the caller left first or the engine's side broke.
 */
export function watchDelivery(body: Readable, settle: (reached: boolean) => void): Readable {
  let started = false;
  return passOn(
    body,
    () => (started = true),
    ({ ended, broke }) => settle((started || ended) && !broke),
  );
}
