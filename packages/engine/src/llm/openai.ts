import type OpenAI from 'openai';
import type { LlmConfig } from '../config/load.js';
import {
  LlmError,
  type GenerateRequest,
  type GenerateResult,
  type LlmProvider,
  type StreamRequest,
  type Usage,
} from './types.js';
import { wholeCallBoundMs } from './fetch.js';
import { errorMessage } from '../util/error-message.js';
import { clientsOnFirstCall, type SdkClients } from './sdk-clients.js';

/**
 * OpenAI chat completions with JSON-schema structured output. The same code speaks to any OpenAI-compatible base URL
 * (`openai` with MNEMOS_API_LLM_BASE_URL) and to a LiteLLM proxy (`litellm`), which translates for every model it
 * supports.
 */
export class OpenAiProvider implements LlmProvider {
  readonly name: string;
  readonly model: string;
  private readonly timeoutMs: number;
  /** The SDK and its clients, made at the first call (see clientsOnFirstCall). */
  private readonly connect: () => Promise<SdkClients<OpenAiSdk, OpenAI>>;

  constructor(config: LlmConfig, fetchImpl: typeof fetch, streamFetch: typeof fetch) {
    this.name = config.provider;
    this.model = config.model;
    this.timeoutMs = config.timeoutMs;
    this.connect = clientsOnFirstCall(
      () => import('openai').then((module) => module.default),
      (sdk, f) => openAiClient(sdk, config, f),
      fetchImpl,
      streamFetch,
    );
  }

  private body(r: GenerateRequest) {
    return {
      model: this.model,
      messages: [
        { role: 'system' as const, content: r.system },
        { role: 'user' as const, content: r.user },
      ],
      temperature: 0,
      response_format: {
        type: 'json_schema' as const,
        json_schema: { name: r.schemaName, schema: r.schema, strict: false },
      },
    };
  }

  async generate(r: GenerateRequest): Promise<GenerateResult> {
    const { sdk, client } = await this.connect();
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      completion = await client.chat.completions.create(this.body(r), r.signal ? { signal: r.signal } : {});
    } catch (error) {
      throw toLlmError(error, sdk, this.name, this.timeoutMs);
    }
    // Servers that imitate the API may leave `choices` out.
    const choice = (completion.choices as typeof completion.choices | undefined)?.[0];
    const message = choice?.message;
    const refusal = message?.refusal ?? (choice?.finish_reason === 'content_filter' ? 'content filter' : undefined);
    return { text: message?.content ?? '', refusal: refusal ?? undefined, usage: openAiUsage(completion.usage) };
  }

  /** `stream: true` with `stream_options.include_usage`: text deltas in `data:` chunks, the usage in the last one. */
  async stream(r: StreamRequest): Promise<GenerateResult> {
    const { sdk, streamingClient } = await this.connect();
    let text = '';
    let refusal: string | undefined;
    let usage: OpenAI.CompletionUsage | undefined;
    try {
      const chunks = await streamingClient.chat.completions.create(
        { ...this.body(r), stream: true, stream_options: { include_usage: true } },
        r.signal ? { signal: r.signal } : {},
      );
      for await (const chunk of chunks) {
        usage = chunk.usage ?? usage;
        const choice = (chunk.choices as typeof chunk.choices | undefined)?.[0];
        const delta = choice?.delta;
        if (delta?.refusal) refusal = (refusal ?? '') + delta.refusal;
        if (choice?.finish_reason === 'content_filter') refusal ??= 'content filter';
        if (delta?.content) {
          text += delta.content;
          r.onText(delta.content);
        }
      }
    } catch (error) {
      throw toLlmError(error, sdk, this.name, this.timeoutMs);
    }
    // The SDK ends a stream quietly when its request is aborted.
    if (r.signal?.aborted) throw new LlmError('The LLM call was cancelled.', 'aborted');
    return { text, refusal, usage: openAiUsage(usage) };
  }
}

function openAiUsage(u: OpenAI.CompletionUsage | null | undefined): Usage {
  return {
    input_tokens: u?.prompt_tokens ?? 0,
    output_tokens: u?.completion_tokens ?? 0,
    total_tokens: u?.total_tokens ?? (u?.prompt_tokens ?? 0) + (u?.completion_tokens ?? 0),
    cached_tokens: u?.prompt_tokens_details?.cached_tokens ?? 0,
    thoughts_tokens: u?.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}

type OpenAiSdk = typeof OpenAI;

function openAiClient(sdk: OpenAiSdk, config: LlmConfig, fetchImpl: typeof fetch): OpenAI {
  return new sdk({
    // A LiteLLM proxy may run without a key; the SDK insists on a value.
    apiKey: config.apiKey ?? 'none',
    ...(config.baseUrl !== undefined ? { baseURL: config.baseUrl } : {}),
    maxRetries: 0,
    // Per-attempt timeouts live in the fetch layer; this only bounds the whole call.
    timeout: wholeCallBoundMs(config),
    fetch: fetchImpl,
  });
}

export function toLlmError(error: unknown, sdk: OpenAiSdk, provider: string, timeoutMs: number): LlmError {
  if (error instanceof LlmError) return error;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof LlmError) return cause;
  if (error instanceof sdk.APIConnectionTimeoutError) {
    return new LlmError(
      `${provider}: the LLM did not answer within ${timeoutMs} ms (MNEMOS_API_LLM_TIMEOUT_MS), retries included.`,
      'timeout',
    );
  }
  if (error instanceof sdk.APIUserAbortError) return new LlmError('The LLM call was cancelled.', 'aborted');
  if (error instanceof sdk.APIConnectionError) {
    return new LlmError(`${provider}: the LLM could not be reached (${error.message}).`, 'unavailable');
  }
  if (error instanceof sdk.APIError) {
    const status: unknown = error.status;
    const code = typeof status === 'number' ? status : 0;
    const transient = code === 429 || code >= 500 || code === 408;
    return new LlmError(
      `${provider}: the LLM answered HTTP ${code}${error.message ? ` (${error.message.slice(0, 300)})` : ''}.`,
      transient ? 'unavailable' : 'rejected',
    );
  }
  return new LlmError(`${provider}: ${errorMessage(error)}`, 'unavailable');
}
