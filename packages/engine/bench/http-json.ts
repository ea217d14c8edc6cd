import { Agent, request } from 'node:http';

export interface JsonAnswer {
  status: number;
  json: Record<string, unknown>;
}

/**
 * JSON over keep-alive node:http connections, at most `maxSockets` at once (further requests wait in the agent). The
 * bench client shares the cores with the engine, so it should cost little, and node:http costs less CPU per request
 * than `fetch` (the benches print the client's CPU per request).
 */
export class JsonClient {
  private readonly agent: Agent;

  constructor(maxSockets: number) {
    this.agent = new Agent({ keepAlive: true, maxSockets });
  }

  post(url: string, body: unknown): Promise<JsonAnswer> {
    return this.send('POST', url, JSON.stringify(body));
  }

  put(url: string, body: unknown): Promise<JsonAnswer> {
    return this.send('PUT', url, JSON.stringify(body));
  }

  get(url: string): Promise<JsonAnswer> {
    return this.send('GET', url, undefined);
  }

  close(): void {
    this.agent.destroy();
  }

  private send(method: string, url: string, payload: string | undefined): Promise<JsonAnswer> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | number> =
        payload === undefined
          ? {}
          : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) };
      const req = request(url, { method, agent: this.agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          try {
            resolve({
              status: res.statusCode ?? 0,
              json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
            });
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        });
      });
      req.on('error', reject);
      req.end(payload);
    });
  }
}
