import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chatCompletion } from './chat-completion.js';
import { serveThread, threadData } from '../src/util/thread.js';

/**
 * The extraction bench's fake LLM (extraction.ts): an OpenAI-compatible server that answers every call with one fact
 * after a fixed delay. It runs in a worker thread with its own event loop, like a real LLM server runs elsewhere: in
 * the engine's thread its timers and socket reads would wait behind the engine's own work, and the bench would measure
 * itself. Times are absolute (timeOrigin + now) so the main thread can compare them with its own.
 */
async function open() {
  const { delayMs } = threadData() as { delayMs: number };
  const now = () => performance.timeOrigin + performance.now();
  const calls: Array<{ start: number; end: number }> = [];
  const server = createServer((req, res) => {
    req.on('data', () => undefined);
    req.on('end', () => {
      const call = { start: now(), end: NaN };
      calls.push(call);
      setTimeout(() => {
        call.end = now();
        const fact = { text: `Fact ${Math.random()}`, type: 'world', occurred_at: null, entities: [], supersedes: [] };
        const content = JSON.stringify({ facts: [fact] });
        res.writeHead(200, { 'content-type': 'application/json' }).end(chatCompletion(content, 'fake'));
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: () => (server.address() as AddressInfo).port,
    /** Every call so far: when it arrived and when it was answered. */
    calls: () => calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export type FakeLlmThread = Awaited<ReturnType<typeof open>>;

serveThread(open);
