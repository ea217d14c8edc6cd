import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chatCompletion } from './chat-completion.js';

/**
 * The knowledge-update bench's stand-in LLM: an OpenAI-compatible server whose fact extraction is scripted from the
 * scenarios. Each memory becomes one fact with the memory's own text; the statement of a new value is a correction
 * that supersedes the facts (among the existing facts the engine shows it) stating an earlier value of the same
 * scenario. So it measures what the engine does with supersessions an LLM returns, not how well a model finds them.
 */
export class ScriptedExtraction {
  private server: Server | undefined;
  /** Facts answered with a non-empty `supersedes`. */
  supersessions = 0;

  /** `keys`: a statement's text -> its `scenario:step` (small talk and distractors are absent or not numbered). */
  constructor(private readonly keys: ReadonlyMap<string, string>) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const content = JSON.stringify({ facts: this.facts(Buffer.concat(chunks).toString('utf8')) });
        res.writeHead(200, { 'content-type': 'application/json' }).end(chatCompletion(content, 'scripted'));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  close(): Promise<void> {
    const server = this.server;
    if (!server) return Promise.resolve();
    return new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private facts(requestBody: string): unknown[] {
    const body = JSON.parse(requestBody) as { messages?: Array<{ role: string; content: string }> };
    const prompt = (body.messages ?? []).find((m) => m.role === 'user')?.content ?? '';
    const marker = prompt.indexOf('INPUT:\n');
    if (marker < 0) return [];
    const input = JSON.parse(prompt.slice(marker + 7)) as {
      text: string;
      existing_facts?: Array<{ id: string; text: string }>;
    };
    const step = stepOf(this.keys.get(input.text));
    const replaced =
      step && step.step > 0
        ? (input.existing_facts ?? [])
            .filter((f) => {
              const earlier = stepOf(this.keys.get(f.text));
              return earlier?.scenario === step.scenario && earlier.step < step.step;
            })
            .map((f) => f.id)
        : [];
    if (replaced.length > 0) this.supersessions++;
    return [
      {
        text: input.text,
        type: step && step.step > 0 ? 'correction' : 'world',
        occurred_at: null,
        entities: [],
        supersedes: replaced,
      },
    ];
  }
}

function stepOf(key: string | undefined): { scenario: string; step: number } | undefined {
  const m = key === undefined ? null : /^(\w+):(\d+)$/.exec(key);
  return m ? { scenario: m[1]!, step: Number(m[2]) } : undefined;
}
