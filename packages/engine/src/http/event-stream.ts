import { PassThrough } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { toProblem } from './problem.js';

const EVENT_STREAM = 'text/event-stream';

/** Whether the caller asked for server-sent events (`Accept: text/event-stream`, alone or among other types). */
export function wantsEventStream(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((type) => type.split(';')[0]!.trim().toLowerCase() === EVENT_STREAM);
}

/**
 * One server-sent event. The data is JSON, which never holds a raw line break, so each event is exactly one `event:`
 * line and one `data:` line.
 */
function eventFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

type Emit = (event: string, data: unknown) => void;

/**
 * Answers with the events `produce` emits. Nothing is sent before its first event, so a failure before then is an
 * ordinary problem answer with its own status; once the stream has begun (status 200), a failure ends it with an
 * `error` event carrying the problem document. The caller going away aborts `signal`.
 */
export async function sendEventStream(
  request: FastifyRequest,
  reply: FastifyReply,
  produce: (emit: Emit, signal: AbortSignal) => Promise<void>,
): Promise<FastifyReply> {
  const gone = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableEnded) gone.abort();
  });
  const events = new PassThrough();
  let begun = false;
  let begin: () => void = () => undefined;
  const firstEvent = new Promise<void>((resolve) => (begin = resolve));
  const emit: Emit = (event, data) => {
    if (events.destroyed || events.writableEnded) return;
    events.write(eventFrame(event, data));
    begun = true;
    begin();
  };
  const produced = produce(emit, gone.signal).then(
    () => void events.end(),
    (error: unknown) => {
      if (!begun) throw error;
      // As for an answer that has not begun: a catalogue problem as it is, anything else logged and made a 500.
      const problem = toProblem(error instanceof Error ? error : new Error(String(error)), request);
      emit('error', problem.document());
      events.end();
    },
  );
  await Promise.race([firstEvent, produced]);
  return reply
    .code(200)
    .type(`${EVENT_STREAM}; charset=utf-8`)
    .header('cache-control', 'no-cache')
    .header('x-accel-buffering', 'no')
    .send(events);
}
