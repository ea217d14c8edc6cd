import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/**
 * A small LLM server for tests: OpenAI-compatible (`POST .../chat/completions`) and Gemini-format
 * (`POST .../models/{model}:generateContent`, Gemini API and Vertex paths). Deterministic by default: extraction splits
 * the memory into sentences and types them by keywords, resolving "yesterday"/"last week"/"tomorrow" against
 * recorded_at; reflect answers from the memories that share a word with the question and cites them. One-shot
 * behaviours (`next`) make it fail, hang, hold its answer until released, rate-limit, refuse or answer malformed JSON;
 * `delayMs` delays every answer.
 * Asked to stream (OpenAI `stream: true`, Gemini `:streamGenerateContent?alt=sse`), it sends the same answer as
 * server-sent events in pieces of `streamChunkChars` characters, `streamGapMs` apart, in that provider's wire format;
 * `cut-stream` breaks the connection after some pieces and `stall-stream` stops sending until the caller goes away.
 */

export type Purpose = 'extract' | 'reflect' | 'other';

export type Behaviour =
  | { kind: 'status'; status: number; retryAfter?: string }
  | { kind: 'malformed' }
  | { kind: 'wrong-shape' }
  | { kind: 'refuse' }
  | { kind: 'hang'; ms: number }
  /** Answers as usual once `until` settles, or gives up when the caller goes away first (slowness set by the test). */
  | { kind: 'held'; until: Promise<unknown> }
  | { kind: 'content'; content: unknown }
  /** A streamed answer whose connection breaks after `afterChunks` pieces. */
  | { kind: 'cut-stream'; afterChunks: number }
  /** A streamed answer that stops after `afterChunks` pieces and waits for the caller to close the connection. */
  | { kind: 'stall-stream'; afterChunks: number }
  /** Answers function calls (OpenAI `tool_calls`) instead of text; the OpenAI format only. */
  | { kind: 'tool-calls'; calls: Array<{ name: string; arguments: Record<string, unknown> }> };

export interface FakeCall {
  format: 'openai' | 'gemini';
  /** Whether the answer was asked for as a stream. */
  streamed: boolean;
  purpose: Purpose;
  path: string;
  input: Record<string, unknown> | undefined;
  /** The request body as sent (messages, tools, ...). */
  body: Record<string, unknown>;
  at: number;
}

interface Fact {
  text: string;
  type: string;
  occurred_at: string | null;
  entities: string[];
  supersedes: string[];
}

const STOP = new Set([
  'The',
  'A',
  'An',
  'I',
  'We',
  'She',
  'He',
  'They',
  'It',
  'This',
  'That',
  'Correction',
  'Yesterday',
  'Today',
  'Tomorrow',
  'Last',
  'To',
  'First',
  'Then',
]);

function dayShift(iso: string, days: number): string {
  const d = new Date(iso);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

const stringField = (record: Record<string, unknown>, key: string): string | undefined =>
  typeof record[key] === 'string' ? record[key] : undefined;

export function extractFacts(input: Record<string, unknown>): Fact[] {
  const text = stringField(input, 'text') ?? '';
  const recorded = stringField(input, 'recorded_at') ?? new Date().toISOString();
  const existing = (input['existing_facts'] ?? []) as Array<{ id: string; text: string }>;
  const sentences = text
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  return sentences.map((raw) => {
    let s = raw.replace(/[.!?]+$/, '');
    let occurred: string | null = null;
    const shifts: Array<[RegExp, number]> = [
      [/\byesterday\b/i, -1],
      [/\blast week\b/i, -7],
      [/\btomorrow\b/i, 1],
    ];
    for (const [re, days] of shifts) {
      if (re.test(s)) {
        occurred = dayShift(recorded, days);
        s = s.replace(re, `on ${occurred}`);
      }
    }
    const correction = /^correction:\s*/i.test(s);
    s = s.replace(/^correction:\s*/i, '');
    const lower = s.toLowerCase();
    const type = correction
      ? 'correction'
      : /\b(likes?|loves?|prefers?|hates?)\b/.test(lower)
        ? 'preference'
        : /\b(thinks?|believes?|feels?)\b/.test(lower)
          ? 'opinion'
          : /^(to |first|step)/.test(lower)
            ? 'procedure'
            : /\b(usually|always|often|tends?)\b/.test(lower)
              ? 'observation'
              : /\b(went|visited|met|did|attended|ran)\b/.test(lower)
                ? 'experience'
                : 'world';
    const entities = [...new Set((s.match(/\b[A-Z][a-zA-Z]+\b/g) ?? []).filter((w) => !STOP.has(w)))];
    const key = s.split(/\s+/).slice(0, 2).join(' ').toLowerCase();
    const supersedes = correction ? existing.filter((e) => e.text.toLowerCase().startsWith(key)).map((e) => e.id) : [];
    return { text: `${s}.`, type, occurred_at: occurred, entities, supersedes };
  });
}

function words(s: string): Set<string> {
  return new Set(
    s
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((w) => w.length > 3),
  );
}

function fill(schema: unknown, answer: string, count: number): unknown {
  const s = (schema ?? {}) as Record<string, unknown>;
  const type: unknown = Array.isArray(s['type']) ? s['type'][0] : s['type'];
  if (Array.isArray(s['enum'])) return s['enum'][0];
  switch (type) {
    case 'object': {
      const props = (s['properties'] ?? {}) as Record<string, unknown>;
      return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, fill(v, answer, count)]));
    }
    case 'array':
      return [];
    case 'integer':
    case 'number':
      return count;
    case 'boolean':
      return count > 0;
    default:
      return answer;
  }
}

export function answerQuestion(input: Record<string, unknown>, outputSchema: Record<string, unknown> | undefined) {
  const question = words(stringField(input, 'question') ?? '');
  const memories = (input['memories'] ?? []) as Array<{ id: string; text: string; superseded?: boolean }>;
  const used = memories.filter((m) => !m.superseded && [...words(m.text)].some((w) => question.has(w)));
  const answer =
    used.length > 0
      ? `From memory: ${used.map((m) => m.text).join(' ')}`
      : 'My memory does not hold the answer to that.';
  const props = (outputSchema?.['properties'] ?? {}) as Record<string, unknown>;
  return {
    answer,
    citations: used.map((m) => m.id),
    ...(props['structured_output'] !== undefined
      ? { structured_output: fill(props['structured_output'], answer, used.length) }
      : {}),
  };
}

function toolCallAnswer(calls: Array<{ name: string; arguments: Record<string, unknown> }>): unknown {
  const toolCalls = calls.map((c, i) => ({
    id: `call_${i}_${c.name}`,
    type: 'function',
    function: { name: c.name, arguments: JSON.stringify(c.arguments) },
  }));
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: 'fake',
    choices: [
      {
        index: 0,
        finish_reason: 'tool_calls',
        logprobs: null,
        message: { role: 'assistant', content: null, tool_calls: toolCalls },
      },
    ],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}

export class FakeLlm {
  readonly calls: FakeCall[] = [];
  /** One-shot behaviours, consumed in order by the next matching calls. */
  private readonly queue: Array<{ purpose: Purpose | 'any'; behaviour: Behaviour }> = [];
  /** Behaviour applied to every matching call until cleared. */
  always: { purpose: Purpose | 'any'; behaviour: Behaviour } | undefined;
  delayMs = 0;
  /** Characters of answer text per streamed event. */
  streamChunkChars = 24;
  /** Pause between streamed events. */
  streamGapMs = 5;
  /** Streamed answers whose caller closed the connection before the last event. */
  streamsAbandoned = 0;
  inFlight = 0;
  maxInFlight = 0;
  private server: Server | undefined;
  private readonly sockets = new Set<import('node:net').Socket>();
  url = '';

  next(behaviour: Behaviour, purpose: Purpose | 'any' = 'any', times = 1): void {
    for (let i = 0; i < times; i++) this.queue.push({ purpose, behaviour });
  }

  reset(): void {
    this.queue.length = 0;
    this.always = undefined;
    this.delayMs = 0;
    this.maxInFlight = this.inFlight;
  }

  count(purpose?: Purpose): number {
    return this.calls.filter((c) => purpose === undefined || c.purpose === purpose).length;
  }

  /** The engine settings that make it call this server as its OpenAI-compatible LLM. */
  get openaiEnv(): Record<string, string> {
    return {
      MNEMOS_API_LLM_PROVIDER: 'openai',
      MNEMOS_API_LLM_MODEL: 'fake-model',
      MNEMOS_API_LLM_API_KEY: 'test-key',
      MNEMOS_API_LLM_BASE_URL: this.openaiBaseUrl,
    };
  }

  /** OpenAI-compatible base URL (…/v1); the Gemini base URL is `url` itself. */
  get openaiBaseUrl(): string {
    return `${this.url}/v1`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const a = this.server.address();
    this.url = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private take(purpose: Purpose): Behaviour | undefined {
    const i = this.queue.findIndex((q) => q.purpose === 'any' || q.purpose === purpose);
    if (i >= 0) return this.queue.splice(i, 1)[0]!.behaviour;
    if (this.always && (this.always.purpose === 'any' || this.always.purpose === purpose)) return this.always.behaviour;
    return undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let gone = false;
    res.on('close', () => (gone = true));
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = req.url ?? '';
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      // handled below as a 400
    }
    const openai = path.endsWith('/chat/completions');
    const gemini = /:(generateContent|streamGenerateContent)$/.test(path.split('?')[0]!);
    const streamed = openai ? body['stream'] === true : /:streamGenerateContent$/.test(path.split('?')[0]!);
    if (req.method !== 'POST' || (!openai && !gemini)) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: `no route ${path}` } }));
      return;
    }
    let prompt = '';
    let schema: Record<string, unknown> | undefined;
    if (openai) {
      const messages = (body['messages'] ?? []) as Array<{ role: string; content: string }>;
      prompt = messages
        .filter((m) => m.role === 'user')
        .map((m) => m.content)
        .join('\n');
      const rf = body['response_format'] as { json_schema?: { schema?: Record<string, unknown> } } | undefined;
      schema = rf?.json_schema?.schema;
    } else {
      const contents = (body['contents'] ?? []) as Array<{ parts?: Array<{ text?: string }> }>;
      prompt = contents
        .flatMap((c) => c.parts ?? [])
        .map((p) => p.text ?? '')
        .join('\n');
      const config = (body['generationConfig'] ?? {}) as Record<string, unknown>;
      schema = (config['responseJsonSchema'] ?? config['response_json_schema']) as Record<string, unknown> | undefined;
    }
    const props = (schema?.['properties'] ?? {}) as Record<string, unknown>;
    const purpose: Purpose =
      props['facts'] !== undefined ? 'extract' : props['answer'] !== undefined ? 'reflect' : 'other';
    const marker = prompt.indexOf('INPUT:\n');
    let input: Record<string, unknown> | undefined;
    try {
      input = marker >= 0 ? (JSON.parse(prompt.slice(marker + 7)) as Record<string, unknown>) : undefined;
    } catch {
      input = undefined;
    }
    this.calls.push({ format: openai ? 'openai' : 'gemini', streamed, purpose, path, input, body, at: Date.now() });
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      const behaviour = this.take(purpose);
      if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
      // Unref'd: a hanging answer must not keep the test process alive.
      if (behaviour?.kind === 'hang') await new Promise((r) => setTimeout(r, behaviour.ms).unref());
      if (behaviour?.kind === 'held') {
        await Promise.race([behaviour.until.catch(() => undefined), new Promise((r) => res.once('close', r))]);
      }
      if (gone) return;
      if (behaviour?.kind === 'status') {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (behaviour.retryAfter !== undefined) headers['retry-after'] = behaviour.retryAfter;
        const error = openai
          ? { error: { message: `fake status ${behaviour.status}`, type: 'fake', code: String(behaviour.status) } }
          : { error: { code: behaviour.status, message: `fake status ${behaviour.status}`, status: 'UNAVAILABLE' } };
        res.writeHead(behaviour.status, headers).end(JSON.stringify(error));
        return;
      }
      let content: string;
      if (behaviour?.kind === 'malformed') content = '{"facts": [ {"text": "unterminated';
      else if (behaviour?.kind === 'wrong-shape') content = JSON.stringify({ facts: 'not a list', answer: 42 });
      else if (behaviour?.kind === 'content')
        content = typeof behaviour.content === 'string' ? behaviour.content : JSON.stringify(behaviour.content);
      else if (behaviour?.kind === 'refuse') content = '';
      else if (purpose === 'extract' && input) content = JSON.stringify({ facts: extractFacts(input) });
      else if (purpose === 'reflect' && input) content = JSON.stringify(answerQuestion(input, schema));
      else content = JSON.stringify({});
      const refused = behaviour?.kind === 'refuse';
      const promptTokens = Math.ceil(prompt.length / 4);
      const outputTokens = Math.ceil(content.length / 4);
      if (streamed) {
        const usage = { promptTokens, outputTokens };
        const model = stringField(body, 'model') ?? 'fake';
        await this.stream(res, openai ? 'openai' : 'gemini', refused ? '' : content, usage, model, behaviour, body);
        return;
      }
      if (behaviour?.kind === 'tool-calls' && openai) {
        const toolCalls = JSON.stringify(toolCallAnswer(behaviour.calls));
        res.writeHead(200, { 'content-type': 'application/json' }).end(toolCalls);
        return;
      }
      const answer = openai
        ? {
            id: 'chatcmpl-fake',
            object: 'chat.completion',
            created: Math.floor(Date.now() / 1000),
            model: stringField(body, 'model') ?? 'fake',
            choices: [
              {
                index: 0,
                finish_reason: 'stop',
                logprobs: null,
                message: {
                  role: 'assistant',
                  content: refused ? null : content,
                  refusal: refused ? 'I cannot help with that.' : null,
                },
              },
            ],
            usage: {
              prompt_tokens: promptTokens,
              completion_tokens: outputTokens,
              total_tokens: promptTokens + outputTokens,
            },
          }
        : {
            candidates: [
              refused
                ? { finishReason: 'SAFETY', index: 0 }
                : { content: { role: 'model', parts: [{ text: content }] }, finishReason: 'STOP', index: 0 },
            ],
            usageMetadata: {
              promptTokenCount: promptTokens,
              candidatesTokenCount: outputTokens,
              totalTokenCount: promptTokens + outputTokens,
            },
            modelVersion: 'fake',
          };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    } finally {
      this.inFlight--;
    }
  }

  private async stream(
    res: ServerResponse,
    format: 'openai' | 'gemini',
    content: string,
    usage: { promptTokens: number; outputTokens: number },
    model: string,
    behaviour: Behaviour | undefined,
    body: Record<string, unknown>,
  ): Promise<void> {
    const closed = new Promise<void>((resolve) => res.once('close', resolve));
    const abandoned = () => !res.writableFinished;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const texts = pieces(content, this.streamChunkChars);
    for (const [i, text] of texts.entries()) {
      if (behaviour?.kind === 'cut-stream' && i === behaviour.afterChunks) {
        // The pieces already written leave first; then the connection breaks.
        await sleep(this.streamGapMs);
        res.socket?.destroy();
        return;
      }
      if (behaviour?.kind === 'stall-stream' && i === behaviour.afterChunks) {
        await closed;
        if (abandoned()) this.streamsAbandoned++;
        return;
      }
      if (i > 0 && this.streamGapMs > 0) await sleep(this.streamGapMs);
      if (res.destroyed) {
        this.streamsAbandoned++;
        return;
      }
      res.write(streamEvent(format, model, { text }));
    }
    const options = (body['stream_options'] ?? {}) as Record<string, unknown>;
    if (format === 'openai') {
      res.write(streamEvent(format, model, { finish: 'stop' }));
      if (options['include_usage'] === true) res.write(streamEvent(format, model, { usage }));
      res.end('data: [DONE]\n\n');
    } else {
      res.end(streamEvent(format, model, { finish: content === '' ? 'SAFETY' : 'STOP', usage }));
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** One streamed event in a provider's wire format: OpenAI `chat.completion.chunk`s, Gemini `GenerateContentResponse`s. */
function streamEvent(
  format: 'openai' | 'gemini',
  model: string,
  part: { text?: string; finish?: string; usage?: { promptTokens: number; outputTokens: number } },
): string {
  const usage = part.usage;
  if (format === 'openai') {
    const chunk = {
      id: 'chatcmpl-fake',
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model,
      choices:
        usage !== undefined
          ? []
          : [
              {
                index: 0,
                delta: part.text !== undefined ? { role: 'assistant', content: part.text } : {},
                finish_reason: part.finish ?? null,
              },
            ],
      ...(usage !== undefined
        ? {
            usage: {
              prompt_tokens: usage.promptTokens,
              completion_tokens: usage.outputTokens,
              total_tokens: usage.promptTokens + usage.outputTokens,
            },
          }
        : {}),
    };
    return `data: ${JSON.stringify(chunk)}\n\n`;
  }
  const chunk = {
    candidates: [
      {
        content: { role: 'model', parts: [{ text: part.text ?? '' }] },
        index: 0,
        ...(part.finish !== undefined ? { finishReason: part.finish } : {}),
      },
    ],
    ...(usage !== undefined
      ? {
          usageMetadata: {
            promptTokenCount: usage.promptTokens,
            candidatesTokenCount: usage.outputTokens,
            totalTokenCount: usage.promptTokens + usage.outputTokens,
          },
        }
      : {}),
    modelVersion: model,
  };
  return `data: ${JSON.stringify(chunk)}\r\n\r\n`;
}

export async function startFakeLlm(): Promise<FakeLlm> {
  return new FakeLlm().start();
}
