/** Reading server-sent events in tests: each `event:`/`data:` block, its data parsed as JSON. */

export interface StreamEvent {
  event: string;
  data: unknown;
}

/** Yields the events of a `text/event-stream` body as they arrive. */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of body) {
    buffered += decoder.decode(chunk, { stream: true });
    for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (data.length > 0) yield { event, data: JSON.parse(data.join('\n')) as unknown };
    }
  }
}

/** POSTs JSON asking for an event stream; answers the response (its body unread). */
export function postForEvents(url: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

/** Every event of a stream, in order. */
export async function allEvents(response: Response): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const e of readEvents(response.body!)) events.push(e);
  return events;
}
