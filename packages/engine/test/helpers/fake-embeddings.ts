import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';

/**
 * A local server speaking the embedding wire formats of OpenAI-compatible APIs (POST /embeddings), Gemini
 * (POST /v1beta/models/{m}:batchEmbedContents) and Cohere (POST /v2/embed). Vectors are deterministic functions of
 * the text (bag of hashed words), so similar texts get similar vectors. Every request is recorded.
 */
export interface FakeEmbeddingServer {
  url: string;
  requests: Array<{ path: string; headers: IncomingMessage['headers']; body: Record<string, unknown> }>;
  /** Answer the next n requests with this status (e.g. 429, 500) before answering normally. */
  failNext(n: number, status: number): void;
  close(): Promise<void>;
}

export function fakeVector(text: string, dimension: number): number[] {
  const v = new Array<number>(dimension).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const h = createHash('sha256').update(word).digest();
    v[h[0]! % dimension]! += 1;
    v[h[1]! % dimension]! += 0.5;
  }
  return v;
}

export async function startFakeEmbeddingServer(dimension = 16): Promise<FakeEmbeddingServer> {
  const requests: FakeEmbeddingServer['requests'] = [];
  let failures = 0;
  let failStatus = 500;
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = (raw ? JSON.parse(raw) : {}) as Record<string, unknown>;
      const path = req.url ?? '';
      requests.push({ path, headers: req.headers, body });
      res.setHeader('content-type', 'application/json');
      if (failures > 0) {
        failures--;
        res.statusCode = failStatus;
        res.end(JSON.stringify({ error: { message: 'try later' } }));
        return;
      }
      if (path.endsWith('/embeddings')) {
        const input = body.input as string[];
        res.end(
          JSON.stringify({
            object: 'list',
            data: input.map((t, index) => ({ object: 'embedding', index, embedding: fakeVector(t, dimension) })),
            usage: { prompt_tokens: 1, total_tokens: 1 },
          }),
        );
      } else if (path.includes(':batchEmbedContents')) {
        const reqs = body.requests as Array<{ content: { parts: Array<{ text: string }> } }>;
        res.end(
          JSON.stringify({
            embeddings: reqs.map((r) => ({ values: fakeVector(r.content.parts[0]!.text, dimension) })),
          }),
        );
      } else if (path.endsWith('/v2/embed')) {
        const texts = body.texts as string[];
        res.end(JSON.stringify({ id: 'x', embeddings: { float: texts.map((t) => fakeVector(t, dimension)) }, texts }));
      } else {
        res.statusCode = 404;
        res.end(JSON.stringify({ error: 'no such path' }));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    failNext(n, status) {
      failures = n;
      failStatus = status;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}
