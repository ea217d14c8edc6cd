import { Transform, type Readable } from 'node:stream';
import { createParser } from 'eventsource-parser';

/** Whether an engine answer is a server-sent event stream (a streamed reflect). */
export const isEventStream = (headers: Record<string, string>): boolean =>
  (headers['content-type'] ?? '').startsWith('text/event-stream');

/**
 * Passes a server-sent event stream on unchanged, chunk by chunk, while watching for its final `done` event. When the
 * stream ends or breaks, `settle` learns whether `done` came: a streamed answer counts like a unary one, only once it
 * is complete (an `error` event, or a caller who left before the end, counts nothing).
 */
export function watchForDone(body: Readable, settle: (done: boolean) => void): Readable {
  let done = false;
  let settled = false;
  const finish = (): void => {
    if (settled) return;
    settled = true;
    settle(done);
  };
  const decoder = new TextDecoder();
  const parser = createParser({
    onEvent: (event) => {
      if (event.event === 'done') done = true;
    },
  });
  const watched = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      callback(null, chunk);
    },
    flush(callback) {
      finish();
      callback();
    },
  });
  watched.once('close', finish);
  body.once('error', (error) => watched.destroy(error));
  watched.once('close', () => body.destroy());
  return body.pipe(watched);
}
