import type { GenerateContentResponse, GoogleGenAI } from '@google/genai';
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

/** Gemini through Google's own SDK: the Gemini API (`gemini`) or Vertex AI (`vertex`), with JSON-schema output. */
export class GeminiProvider implements LlmProvider {
  readonly name: string;
  readonly model: string;
  /** The SDK and its clients, made at the first call (see clientsOnFirstCall). */
  private readonly connect: () => Promise<SdkClients<GeminiSdk, GoogleGenAI>>;

  constructor(config: LlmConfig, fetchImpl: typeof fetch, streamFetch: typeof fetch) {
    this.name = config.provider;
    this.model = config.model;
    this.connect = clientsOnFirstCall(
      () => import('@google/genai'),
      (sdk, f) => geminiClient(sdk, config, f),
      fetchImpl,
      streamFetch,
    );
  }

  private params(r: GenerateRequest) {
    return {
      model: this.model,
      contents: [{ role: 'user', parts: [{ text: r.user }] }],
      config: {
        systemInstruction: r.system,
        temperature: 0,
        responseMimeType: 'application/json',
        responseJsonSchema: r.schema,
        ...(r.signal ? { abortSignal: r.signal } : {}),
      },
    };
  }

  async generate(r: GenerateRequest): Promise<GenerateResult> {
    const { sdk, client } = await this.connect();
    let response: GenerateContentResponse;
    try {
      response = await client.models.generateContent(this.params(r));
    } catch (error) {
      throw toLlmError(error, sdk, this.name);
    }
    return { text: answerText(response), refusal: refusalOf(response), usage: geminiUsage(response) };
  }

  /** `streamGenerateContent?alt=sse` through the SDK: each chunk carries text parts; the last the usage and finish. */
  async stream(r: StreamRequest): Promise<GenerateResult> {
    const { sdk, streamingClient } = await this.connect();
    let text = '';
    let refusal: string | undefined;
    let withUsage: GenerateContentResponse | undefined;
    try {
      for await (const chunk of await streamingClient.models.generateContentStream(this.params(r))) {
        const delta = answerText(chunk);
        if (delta !== '') {
          text += delta;
          r.onText(delta);
        }
        refusal ??= refusalOf(chunk);
        if (chunk.usageMetadata) withUsage = chunk;
      }
    } catch (error) {
      throw toLlmError(error, sdk, this.name);
    }
    if (r.signal?.aborted) throw new LlmError('The LLM call was cancelled.', 'aborted');
    return { text, refusal, usage: geminiUsage(withUsage) };
  }
}

type GeminiSdk = typeof import('@google/genai');

function geminiClient(sdk: GeminiSdk, config: LlmConfig, fetchImpl: typeof fetch): GoogleGenAI {
  const vertex = config.provider === 'vertex';
  return new sdk.GoogleGenAI({
    ...(vertex ? { vertexai: true } : {}),
    ...(config.apiKey !== undefined ? { apiKey: config.apiKey } : {}),
    // Vertex with a key is "express mode" (no project); without one, project + application default credentials.
    ...(vertex && config.apiKey === undefined && config.vertexProject !== undefined
      ? { project: config.vertexProject }
      : {}),
    ...(vertex && config.apiKey === undefined ? { location: config.vertexLocation ?? 'us-central1' } : {}),
    httpOptions: {
      ...(config.baseUrl !== undefined ? { baseUrl: config.baseUrl } : {}),
      timeout: wholeCallBoundMs(config),
      retryOptions: { attempts: 1 },
      fetch: fetchImpl,
    },
  });
}

/** The answer's text parts (thoughts left out). */
function answerText(response: GenerateContentResponse): string {
  const parts = response.candidates?.[0]?.content?.parts ?? [];
  return parts.map((p) => (p.thought ? '' : (p.text ?? ''))).join('');
}

function geminiUsage(response: GenerateContentResponse | undefined): Usage {
  const m = response?.usageMetadata;
  const input = m?.promptTokenCount ?? 0;
  const output = m?.candidatesTokenCount ?? 0;
  const thoughts = m?.thoughtsTokenCount ?? 0;
  return {
    input_tokens: input,
    output_tokens: output,
    total_tokens: m?.totalTokenCount ?? input + output + thoughts,
    cached_tokens: m?.cachedContentTokenCount ?? 0,
    thoughts_tokens: thoughts,
  };
}

function refusalOf(response: GenerateContentResponse): string | undefined {
  const finish = response.candidates?.[0]?.finishReason;
  const blocked = response.promptFeedback?.blockReason;
  if (blocked) return `prompt blocked (${blocked})`;
  return finish !== undefined && ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII'].includes(finish)
    ? `answer blocked (${finish})`
    : undefined;
}

function toLlmError(error: unknown, sdk: GeminiSdk, provider: string): LlmError {
  if (error instanceof LlmError) return error;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof LlmError) return cause;
  if (error instanceof sdk.ApiError) {
    const transient = error.status === 429 || error.status >= 500 || error.status === 408;
    return new LlmError(
      `${provider}: the LLM answered HTTP ${error.status} (${error.message.slice(0, 300)}).`,
      transient ? 'unavailable' : 'rejected',
    );
  }
  if ((error as Error).name === 'AbortError') return new LlmError('The LLM call was cancelled.', 'aborted');
  return new LlmError(`${provider}: ${errorMessage(error)}`, 'unavailable');
}
