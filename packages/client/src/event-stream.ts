/** One server-sent event: its type (`message` when the server names none) and its data lines joined. */
interface ServerSentEvent {
  event: string;
  data: string;
}

/**
 * Reads server-sent events from text as it arrives, by the rules of the HTML event-stream format: lines end in CR, LF
 * or CRLF; `event:` names the event, `data:` lines add to its data, a blank line dispatches it, `:` lines are comments.
 * Written here so the client keeps no runtime dependencies (the packaged client installs without a registry).
 */
export class EventStreamReader {
  private buffered = '';
  private event = '';
  private data: string[] = [];

  /** Adds text; answers the events it completes. */
  push(text: string): ServerSentEvent[] {
    this.buffered += text;
    const done: ServerSentEvent[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffered);
      // A CR at the very end may be the first half of a CRLF: wait for the next piece.
      if (!match || (match[0] === '\r' && match.index === this.buffered.length - 1)) break;
      const line = this.buffered.slice(0, match.index);
      this.buffered = this.buffered.slice(match.index + match[0].length);
      const event = this.line(line);
      if (event) done.push(event);
    }
    return done;
  }

  private line(line: string): ServerSentEvent | undefined {
    if (line === '') {
      const event = this.data.length > 0 ? { event: this.event || 'message', data: this.data.join('\n') } : undefined;
      this.event = '';
      this.data = [];
      return event;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    return undefined;
  }
}

/** The server-sent events of a response body, as they arrive. `signal` aborting ends them early, as the body's end would. */
export async function* serverSentEvents(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<ServerSentEvent> {
  const events = new EventStreamReader();
  const decoder = new TextDecoder();
  const reader = body.getReader();
  const stop = () => void reader.cancel().catch(() => undefined);
  if (signal?.aborted) stop();
  else signal?.addEventListener('abort', stop, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield* events.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    signal?.removeEventListener('abort', stop);
    // Leaving early (break, an error) closes the connection, which tells the server to stop.
    await reader.cancel().catch(() => undefined);
  }
}
