import { errorFromAnswer, MnemosError, PERMANENT_CODES } from './errors.js';
import { serverSentEvents } from './event-stream.js';
import type {
  Bank,
  BankList,
  BankListQuery,
  BankProfile,
  BulkUpdateResult,
  ClearQuery,
  DeleteMatchingResult,
  DeleteResult,
  ExportedMemory,
  ExportQuery,
  Filter,
  ImportQuery,
  ImportResult,
  MemoriesResult,
  MemorySet,
  Memory,
  MemoryList,
  MemoryListQuery,
  MemoryHistory,
  EntityDetail,
  EntityList,
  EntityListQuery,
  EntityQuery,
  MemoryPatch,
  Operation,
  RecallRequest,
  RecallResult,
  ReflectRequest,
  ReflectResult,
  ReflectStreamEvent,
  RetainItem,
  ChatMessage,
  RetainRequest,
  RetainResult,
  Usage,
} from './types.js';

type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface MnemosOptions {
  /** The engine (`http://localhost:8888`) or gateway address. */
  baseUrl: string;
  /** A gateway API key (`mnm_live_...`) or OAuth access token; the client then targets `/v1/me`, else `/v1/default`. */
  apiKey?: string | undefined;
  /** The space of every call that takes one, unless the call names its own. */
  space?: string | undefined;
  /** The path tenant; defaults to `me` with an API key, `default` without (set it for a multi-tenant engine). */
  tenant?: string | undefined;
  /** Per-attempt timeout in milliseconds (default 30 000). */
  timeoutMs?: number | undefined;
  /** Retries on 429/503 and connection failures (default 3). */
  maxRetries?: number | undefined;
  /** A Retry-After longer than this (milliseconds, default 60 000) is not waited for: the error is thrown at once. */
  maxRetryDelayMs?: number | undefined;
  /** Exponential backoff when the server names no Retry-After: base and ceiling in milliseconds (500, 8000). */
  backoffBaseMs?: number | undefined;
  backoffMaxMs?: number | undefined;
  /** Extra headers on every request. */
  headers?: Record<string, string> | undefined;
  /** A fetch implementation (defaults to the global fetch). */
  fetch?: FetchLike | undefined;
}

/** Options every call accepts. */
export interface RequestOptions {
  /** Cancels the call (and any retry wait); the call rejects with MnemosError code `aborted`. */
  signal?: AbortSignal | undefined;
  /** Overrides the client's per-attempt timeout. */
  timeoutMs?: number | undefined;
}

export type RetainOptions = Omit<RetainRequest, 'content' | 'items'> & RequestOptions;
export type RetainBatchOptions = Pick<RetainRequest, 'space' | 'async'> & RequestOptions;
/** A typed filter expression in place of the schema's open one. */
type WithFilter<T> = Omit<T, 'filter'> & { filter?: Filter | null | undefined };
export type RecallOptions = WithFilter<Omit<RecallRequest, 'query'>> & RequestOptions;
export type ReflectOptions = WithFilter<Omit<ReflectRequest, 'query'>> & RequestOptions;
export type ListBanksOptions = BankListQuery & RequestOptions;
/** `filter` is sent as the JSON text the list's query string takes. */
export type ListMemoriesOptions = WithFilter<MemoryListQuery> & RequestOptions;
/** `space` bounds the delete to one space; `dry_run` counts the memories without deleting them. */
export interface DeleteMatchingOptions extends RequestOptions {
  space?: string | undefined;
  dry_run?: boolean | undefined;
}
export type ListEntitiesOptions = EntityListQuery & RequestOptions;
export type GetEntityOptions = EntityQuery & RequestOptions;
export type ClearMemoriesOptions = ClearQuery & RequestOptions;
export type BulkOptions = { space?: string } & RequestOptions;
export type ExportOptions = ExportQuery & RequestOptions;
export type ImportOptions = ImportQuery & RequestOptions;
/** Defaults for every message (timestamp, context, metadata, tags, document_id, expires_at), the space and async. */
export type RetainMessagesOptions = Omit<RetainRequest, 'content' | 'items' | 'messages'> & RequestOptions;

/** Reads a 2xx answer into the call's value, inside the attempt's timeout. */
type ReadAnswer = (answer: Response) => Promise<unknown>;

const JSON_ACCEPT = 'application/json, application/problem+json';
const EVENTS_ACCEPT = 'text/event-stream, application/problem+json';

async function readJson(answer: Response): Promise<unknown> {
  const text = await answer.text();
  if (text === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new MnemosError({
      status: answer.status,
      code: 'invalid_response',
      detail: `The server answered ${answer.status} with a body that is not JSON.`,
      cause,
    });
  }
}

/** A streamed answer is read by its consumer, after the attempt: the attempt's timeout covers its start only. */
const leaveUnread: ReadAnswer = (answer) => Promise.resolve(answer);

type QueryValue = string | number | boolean | string[] | null | undefined;

interface Call extends RequestOptions {
  body?: unknown;
  /** A body sent as it is (an import), with its media type. */
  rawBody?: { text: string; type: string } | undefined;
  query?: Record<string, QueryValue> | undefined;
}

const seg = (value: string) => encodeURIComponent(value);

/** Splits a call's options into the request options and the fields that go on the wire (undefined ones dropped). */
function split(options: RequestOptions | undefined): [RequestOptions, Record<string, unknown>] {
  const { signal, timeoutMs, ...rest } = options ?? {};
  const fields = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
  return [{ signal, timeoutMs }, fields];
}

function abortError(signal: AbortSignal): MnemosError {
  return new MnemosError({ status: 0, code: 'aborted', detail: 'The call was aborted.', cause: signal.reason });
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The Mnemos client: retain, recall, reflect, banks, memories and usage over HTTP (fetch, no dependencies).
 *
 * ```ts
 * const mnemos = new Mnemos({ baseUrl: 'http://localhost:8888' });
 * await mnemos.retain('alice', 'Alice prefers green tea.');
 * const { results } = await mnemos.recall('alice', 'What does Alice drink?');
 * ```
 */
export class Mnemos {
  readonly baseUrl: string;
  readonly tenant: string;
  readonly space: string | undefined;
  private readonly apiKey: string | undefined;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly maxRetryDelayMs: number;
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;
  private readonly headers: Record<string, string>;
  private readonly fetchImpl: FetchLike;

  constructor(options: MnemosOptions) {
    // JavaScript callers may pass nothing at all; the check answers them with what to write.
    if (typeof (options as MnemosOptions | undefined)?.baseUrl !== 'string' || options.baseUrl.trim() === '') {
      throw new TypeError('Mnemos: baseUrl is required, e.g. new Mnemos({ baseUrl: "http://localhost:8888" })');
    }
    this.baseUrl = options.baseUrl.trim().replace(/\/+$/, '');
    this.apiKey = options.apiKey === '' ? undefined : options.apiKey;
    this.tenant = options.tenant ?? (this.apiKey === undefined ? 'default' : 'me');
    this.space = options.space;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.maxRetries = options.maxRetries ?? 3;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 60_000;
    this.backoffBaseMs = options.backoffBaseMs ?? 500;
    this.backoffMaxMs = options.backoffMaxMs ?? 8_000;
    this.headers = { ...(options.headers ?? {}) };
    const f = options.fetch ?? globalThis.fetch;
    if (typeof f !== 'function') throw new TypeError('Mnemos: no fetch available; pass options.fetch');
    this.fetchImpl = (input, init) => f(input, init);
  }

  /** `/v1/{tenant}`: the prefix of the bank, memory and space paths. */
  get prefix(): string {
    return `/v1/${seg(this.tenant)}`;
  }

  private bankPath(bankId: string, rest = ''): string {
    if (typeof bankId !== 'string' || bankId === '') throw new TypeError('Mnemos: bankId must be a non-empty string');
    return `${this.prefix}/banks/${seg(bankId)}${rest}`;
  }

  private withSpace(fields: Record<string, unknown>): Record<string, unknown> {
    return fields['space'] === undefined && this.space !== undefined ? { ...fields, space: this.space } : fields;
  }

  private backoff(attempt: number): number {
    const ceiling = Math.min(this.backoffMaxMs, this.backoffBaseMs * 2 ** attempt);
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  /** One HTTP call with timeouts, abort and retries; answers the decoded JSON body. */
  async request<T>(method: string, path: string, call: Call = {}): Promise<T> {
    return (await this.send(method, path, call, JSON_ACCEPT, readJson)) as T;
  }

  /** The retry loop under every call: each attempt's 2xx answer is read by `read`. */
  private async send(method: string, path: string, call: Call, accept: string, read: ReadAnswer): Promise<unknown> {
    let url = this.baseUrl + path;
    if (call.query) {
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries(call.query)) {
        if (value === undefined || value === null) continue;
        if (Array.isArray(value)) for (const v of value) params.append(key, v);
        else params.append(key, String(value));
      }
      const qs = params.toString();
      if (qs) url += `?${qs}`;
    }
    const headers: Record<string, string> = { accept, ...this.headers };
    if (this.apiKey !== undefined) headers['authorization'] = `Bearer ${this.apiKey}`;
    let body: string | undefined;
    if (call.rawBody !== undefined) {
      headers['content-type'] = call.rawBody.type;
      body = call.rawBody.text;
    } else if (call.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(call.body);
    }
    const timeoutMs = call.timeoutMs ?? this.timeoutMs;
    for (let attempt = 0; ; attempt++) {
      if (call.signal?.aborted) throw abortError(call.signal);
      const outcome = await this.attempt(method, url, headers, body, timeoutMs, call.signal, read);
      if ('ok' in outcome) return outcome.ok;
      const error = outcome.error;
      const retryable =
        (error.status === 429 || error.status === 503 || error.code === 'connection_error') &&
        !PERMANENT_CODES.has(error.code);
      if (!retryable || attempt >= this.maxRetries) throw error;
      const delay = error.retryAfter !== undefined ? error.retryAfter * 1000 : this.backoff(attempt);
      if (delay > this.maxRetryDelayMs) throw error;
      await sleep(delay, call.signal);
    }
  }

  private async attempt(
    method: string,
    url: string,
    headers: Record<string, string>,
    body: string | undefined,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    read: ReadAnswer,
  ): Promise<{ ok: unknown } | { error: MnemosError }> {
    const controller = new AbortController();
    const timeout = { expired: false };
    const timer = setTimeout(() => {
      timeout.expired = true;
      controller.abort();
    }, timeoutMs);
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const answer = await this.fetchImpl(url, { method, headers, body, signal: controller.signal });
      if (!answer.ok) {
        const text = await answer.text();
        return { error: errorFromAnswer(answer.status, answer.headers.get('retry-after'), text) };
      }
      return { ok: await read(answer) };
    } catch (cause) {
      if (cause instanceof MnemosError) throw cause;
      if (signal?.aborted) throw abortError(signal);
      if (timeout.expired) {
        throw new MnemosError({
          status: 0,
          code: 'timeout',
          detail: `No answer from ${this.baseUrl} within ${timeoutMs} ms.`,
          cause,
        });
      }
      const reason =
        cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause);
      return {
        error: new MnemosError({
          status: 0,
          code: 'connection_error',
          detail: `Could not reach ${this.baseUrl}: ${reason}.`,
          cause,
        }),
      };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  // ---------------------------------------------------------------- retain, recall, reflect

  /** Stores one memory; recallable as soon as the call returns. The third argument is a space or the options. */
  retain(bankId: string, content: string, spaceOrOptions?: string | RetainOptions): Promise<RetainResult> {
    const options: RetainOptions | undefined =
      typeof spaceOrOptions === 'string' ? { space: spaceOrOptions } : spaceOrOptions;
    const [req, fields] = split(options);
    return this.request('POST', this.bankPath(bankId, '/memories'), {
      ...req,
      body: this.withSpace({ ...fields, content }),
    });
  }

  /** Stores several memories in one call (one transaction). Items are strings or `{content, timestamp?, tags?, ...}`. */
  retainBatch(bankId: string, items: Array<string | RetainItem>, options?: RetainBatchOptions): Promise<RetainResult> {
    const [req, fields] = split(options);
    const wire = items.map((item) => (typeof item === 'string' ? { content: item } : item));
    return this.request('POST', this.bankPath(bankId, '/memories'), {
      ...req,
      body: this.withSpace({ ...fields, items: wire }),
    });
  }

  /**
   * Stores chat turns as they are (`{role, content, name?, timestamp?}`), one memory each, written "speaker: content"
   * (the speaker is the name, else the role). The answer's `messages` gives each message's memory ids, in order, and
   * `duplicate: true` for a message already stored.
   */
  retainMessages(bankId: string, messages: ChatMessage[], options?: RetainMessagesOptions): Promise<RetainResult> {
    const [req, fields] = split(options);
    return this.request('POST', this.bankPath(bankId, '/memories'), {
      ...req,
      body: this.withSpace({ ...fields, messages }),
    });
  }

  /** The memories relevant to a query, best first (hybrid search), cut to `max_tokens`. */
  recall(bankId: string, query: string, options?: RecallOptions): Promise<RecallResult> {
    const [req, fields] = split(options);
    return this.request('POST', this.bankPath(bankId, '/memories/recall'), {
      ...req,
      body: this.withSpace({ ...fields, query }),
    });
  }

  /** An LLM answer from the bank's memory, with the ids it cites. Needs an engine with an LLM (else 503 `llm_not_configured`). */
  reflect(bankId: string, query: string, options?: ReflectOptions): Promise<ReflectResult> {
    const [req, fields] = split(options);
    return this.request('POST', this.bankPath(bankId, '/reflect'), {
      ...req,
      body: this.withSpace({ ...fields, query }),
    });
  }

  /**
   * The same answer streamed (server-sent events): `delta` events carry the answer's text as the LLM writes it, and
   * the last event, `done`, the whole result as `reflect` answers it (also the generator's return value). A failure
   * once the stream has begun throws a MnemosError from the problem the server sent; leaving the loop early closes the
   * connection, which stops the LLM call. Failures before the stream begins are retried as every call's are.
   *
   * ```ts
   * for await (const event of mnemos.reflectStream('alice', 'What does Alice drink?')) {
   *   if (event.type === 'delta') process.stdout.write(event.text);
   *   else console.log(event.result.citations);
   * }
   * ```
   */
  async *reflectStream(
    bankId: string,
    query: string,
    options?: ReflectOptions,
  ): AsyncGenerator<ReflectStreamEvent, ReflectResult, undefined> {
    const [req, fields] = split(options);
    const path = this.bankPath(bankId, '/reflect');
    const body = this.withSpace({ ...fields, query });
    const answer = (await this.send('POST', path, { ...req, body }, EVENTS_ACCEPT, leaveUnread)) as Response;
    const signal = req.signal;
    try {
      if (!answer.body || !(answer.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
        throw new MnemosError({
          status: answer.status,
          code: 'invalid_response',
          detail: 'The server did not answer with an event stream; is it an engine that streams reflect?',
        });
      }
      for await (const event of serverSentEvents(answer.body, signal)) {
        if (event.event === 'delta') {
          yield { type: 'delta', text: (JSON.parse(event.data) as { text: string }).text };
        } else if (event.event === 'done') {
          const result = JSON.parse(event.data) as ReflectResult;
          yield { type: 'done', result };
          return result;
        } else if (event.event === 'error') {
          const status = (JSON.parse(event.data) as { status?: unknown }).status;
          throw errorFromAnswer(typeof status === 'number' ? status : 502, null, event.data);
        }
      }
      if (signal?.aborted) throw abortError(signal);
      throw new MnemosError({
        status: answer.status,
        code: 'invalid_response',
        detail: 'The reflect stream ended before its done event; the connection may have been cut. Try again.',
      });
    } catch (cause) {
      // A read cut short by the caller's abort surfaces as the abort, whatever the body reported.
      if (signal?.aborted && !(cause instanceof MnemosError && cause.code === 'aborted')) throw abortError(signal);
      throw cause;
    }
  }

  /** Stores org memory of a space (shared by its banks; recall with `include_org: true` blends it in). */
  retainOrg(space: string, content: string, options?: Omit<RetainOptions, 'space'>): Promise<RetainResult> {
    const [req, fields] = split(options);
    return this.request('POST', `${this.prefix}/spaces/${seg(space)}/memories`, {
      ...req,
      body: { ...fields, content },
    });
  }

  /** Recalls a space's org memory. */
  recallOrg(space: string, query: string, options?: Omit<RecallOptions, 'space'>): Promise<RecallResult> {
    const [req, fields] = split(options);
    return this.request('POST', `${this.prefix}/spaces/${seg(space)}/memories/recall`, {
      ...req,
      body: { ...fields, query },
    });
  }

  // ---------------------------------------------------------------- banks

  listBanks(options?: ListBanksOptions): Promise<BankList> {
    const [req, query] = split(options);
    return this.request('GET', `${this.prefix}/banks`, { ...req, query: query as Record<string, QueryValue> });
  }

  /** Every bank, most recently written first, page by page through `next_cursor`. */
  async *iterateBanks(options?: Omit<ListBanksOptions, 'cursor' | 'offset'>): AsyncGenerator<Bank> {
    let cursor: string | undefined;
    do {
      const page = await this.listBanks({ ...options, ...(cursor === undefined ? {} : { cursor }) });
      yield* page.banks;
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }

  getBank(bankId: string, options?: RequestOptions): Promise<Bank> {
    return this.request('GET', this.bankPath(bankId), { ...options });
  }

  /** Creates or replaces a bank profile (name, mission, disposition, space). */
  putBank(bankId: string, profile: BankProfile = {}, options?: RequestOptions): Promise<Bank> {
    return this.request('PUT', this.bankPath(bankId), { ...options, body: profile });
  }

  /** Changes some fields of an existing bank profile. */
  updateBank(bankId: string, changes: BankProfile, options?: RequestOptions): Promise<Bank> {
    return this.request('PATCH', this.bankPath(bankId), { ...options, body: changes });
  }

  /** Erases a bank and everything derived from it. */
  deleteBank(bankId: string, options?: RequestOptions): Promise<DeleteResult> {
    return this.request('DELETE', this.bankPath(bankId), { ...options });
  }

  // ---------------------------------------------------------------- memories

  /** Lists memories, newest first, with filters (`space`, `type`, `q`, `tags`, `since`, `until`) and pagination. */
  listMemories(bankId: string, options?: ListMemoriesOptions): Promise<MemoryList> {
    const [req, { filter, ...query }] = split(options);
    return this.request('GET', this.bankPath(bankId, '/memories'), {
      ...req,
      query: this.withSpace({
        ...query,
        ...(filter === undefined || filter === null ? {} : { filter: JSON.stringify(filter) }),
      }) as Record<string, QueryValue>,
    });
  }

  /** Every memory the filters match, newest first, page by page through `next_cursor` (unmoved by new memories). */
  async *iterateMemories(
    bankId: string,
    options?: Omit<ListMemoriesOptions, 'cursor' | 'offset'>,
  ): AsyncGenerator<Memory> {
    let cursor: string | undefined;
    do {
      const page = await this.listMemories(bankId, { ...options, ...(cursor === undefined ? {} : { cursor }) });
      yield* page.items;
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }

  getMemory(bankId: string, memoryId: string, options?: RequestOptions): Promise<Memory> {
    return this.request('GET', this.bankPath(bankId, `/memories/${seg(memoryId)}`), { ...options });
  }

  /** A memory's versions, oldest first; a deleted memory keeps only a tombstone, its text forgotten in every version. */
  memoryHistory(bankId: string, memoryId: string, options?: RequestOptions): Promise<MemoryHistory> {
    return this.request('GET', this.bankPath(bankId, `/memories/${seg(memoryId)}/history`), { ...options });
  }

  /** The names the bank's memories carry, in name order; `prefix` filters, `next_cursor` pages on. */
  listEntities(bankId: string, options?: ListEntitiesOptions): Promise<EntityList> {
    const [req, query] = split(options);
    return this.request('GET', this.bankPath(bankId, '/entities'), {
      ...req,
      query: this.withSpace(query) as Record<string, QueryValue>,
    });
  }

  /** One entity (any case): its current facts and the timeline of their changes; 404 entity_not_found if unknown. */
  getEntity(bankId: string, name: string, options?: GetEntityOptions): Promise<EntityDetail> {
    const [req, query] = split(options);
    return this.request('GET', this.bankPath(bankId, `/entities/${seg(name)}`), {
      ...req,
      query: this.withSpace(query) as Record<string, QueryValue>,
    });
  }

  /**
   * Edits text, tags, metadata or context, invalidates a memory with `{state: "invalidated"}`, or sets its validity
   * (`valid_from`, `valid_to`).
   */
  updateMemory(bankId: string, memoryId: string, patch: MemoryPatch, options?: RequestOptions): Promise<Memory> {
    return this.request('PATCH', this.bankPath(bankId, `/memories/${seg(memoryId)}`), { ...options, body: patch });
  }

  /** Hard-deletes a memory and the facts derived from it. */
  deleteMemory(bankId: string, memoryId: string, options?: RequestOptions): Promise<DeleteResult> {
    return this.request('DELETE', this.bankPath(bankId, `/memories/${seg(memoryId)}`), { ...options });
  }

  /**
   * Deletes, in one transaction, the memories a filter passes (and the facts derived from them); with `dry_run`,
   * only counts them. Needs the `memory:delete` scope on a gateway.
   */
  deleteMatching(bankId: string, filter: Filter, options?: DeleteMatchingOptions): Promise<DeleteMatchingResult> {
    const [req, fields] = split(options);
    return this.request('POST', this.bankPath(bankId, '/memories/delete'), {
      ...req,
      body: this.withSpace({ ...fields, filter }),
    });
  }

  /** Erases a bank's memories (optionally only one space or type). */
  clearMemories(bankId: string, options?: ClearMemoriesOptions): Promise<DeleteResult> {
    const [req, query] = split(options);
    return this.request('DELETE', this.bankPath(bankId, '/memories'), {
      ...req,
      query: query as Record<string, QueryValue>,
    });
  }

  /**
   * Sets metadata, tags or state on every memory a filter passes or ids name, in one transaction (each gets a version
   * in its history, as `updateMemory` gives); each field set replaces the old value.
   */
  updateMemories(
    bankId: string,
    which: { filter: Filter } | { ids: string[] },
    set: MemorySet,
    options?: BulkOptions,
  ): Promise<BulkUpdateResult> {
    const [req, fields] = split(options);
    return this.request('POST', this.bankPath(bankId, '/memories/update'), {
      ...req,
      body: this.withSpace({ ...fields, ...which, set }),
    });
  }

  /** Several memories by id (at most 1000), in the order asked; an id without a memory answers `found: false`. */
  getMemories(bankId: string, ids: string[], options?: BulkOptions): Promise<MemoriesResult> {
    const [req, fields] = split(options);
    return this.request('POST', this.bankPath(bankId, '/memories/get'), {
      ...req,
      body: this.withSpace({ ...fields, ids }),
    });
  }

  /**
   * The export of a bank as its NDJSON text arrives, a piece at a time (`exportMemories` reads it as memories). The
   * call's timeout covers its start; the stream then runs as long as the bank takes.
   */
  async *exportText(bankId: string, options?: ExportOptions): AsyncGenerator<string> {
    const [req, query] = split(options);
    const path = this.bankPath(bankId, '/export');
    const call: Call = { ...req, query: this.withSpace(query) as Record<string, QueryValue> };
    const answer = (await this.send(
      'GET',
      path,
      call,
      'application/x-ndjson, application/problem+json',
      leaveUnread,
    )) as Response;
    if (answer.body === null) return;
    const decoder = new TextDecoder();
    const reader = (answer.body as ReadableStream<Uint8Array>).getReader();
    try {
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        yield decoder.decode(read.value, { stream: true });
      }
    } finally {
      // Leaving the loop early closes the connection.
      await reader.cancel().catch(() => undefined);
    }
    const rest = decoder.decode();
    if (rest !== '') yield rest;
  }

  /** Every memory of a bank (retained memories, then facts), as `GET .../export` streams them. */
  async *exportMemories(bankId: string, options?: ExportOptions): AsyncGenerator<ExportedMemory> {
    let pending = '';
    for await (const text of this.exportText(bankId, options)) {
      const lines = (pending + text).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line !== '') yield JSON.parse(line) as ExportedMemory;
    }
    if (pending !== '') yield JSON.parse(pending) as ExportedMemory;
  }

  /**
   * Imports memories: the lines of an export (NDJSON text, or the memories themselves), or with `format: 'mem0'` a
   * mem0 get_all document. Ids are kept, memories already in the bank skipped, bad lines reported by number. One
   * call is one request, within the server's import limit: send a large export in parts.
   */
  importMemories(
    bankId: string,
    memories: string | ReadonlyArray<Record<string, unknown>>,
    options?: ImportOptions,
  ): Promise<ImportResult> {
    const [req, query] = split(options);
    const text = typeof memories === 'string' ? memories : memories.map((m) => JSON.stringify(m)).join('\n');
    const type = options?.format === 'mem0' ? 'application/json' : 'application/x-ndjson';
    return this.request('POST', this.bankPath(bankId, '/import'), {
      ...req,
      query: query as Record<string, QueryValue>,
      rawBody: { text, type },
    });
  }

  // ---------------------------------------------------------------- the rest

  /** Status of an asynchronous retain or extraction. */
  operation(operationId: string, options?: RequestOptions): Promise<Operation> {
    return this.request('GET', `${this.prefix}/operations/${seg(operationId)}`, { ...options });
  }

  /** Usage of the key's project against its quotas (gateway only: `GET /v1/me/usage`). */
  usage(options?: RequestOptions): Promise<Usage> {
    return this.request('GET', '/v1/me/usage', { ...options });
  }

  /** `GET /health`: rejects with a 503 MnemosError while the server warms up. */
  health(options?: RequestOptions): Promise<Record<string, unknown>> {
    return this.request('GET', '/health', { ...options });
  }

  /** `GET /version`: version and enabled features. */
  version(options?: RequestOptions): Promise<Record<string, unknown>> {
    return this.request('GET', '/version', { ...options });
  }
}
