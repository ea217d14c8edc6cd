import { ApiError, GoogleGenAI, type GenerateContentResponse } from '@google/genai';
import type { LlmConfig } from '../config/load.js';
import { LlmError, type GenerateRequest, type GenerateResult, type LlmProvider } from './types.js';
import { wholeCallBoundMs } from './fetch.js';

/** Gemini through Google's own SDK: the Gemini API (`gemini`) or Vertex AI (`vertex`), with JSON-schema output. */
export class GeminiProvider implements LlmProvider {
  readonly name: string;
  readonly model: string;
  private readonly client: GoogleGenAI;

  constructor(config: LlmConfig, fetchImpl: typeof fetch) {
    this.name = config.provider;
    this.model = config.model;
    const vertex = config.provider === 'vertex';
    this.client = new GoogleGenAI({
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

  async generate(r: GenerateRequest): Promise<GenerateResult> {
    let response: GenerateContentResponse;
    try {
      response = await this.client.models.generateContent({
        model: this.model,
        contents: [{ role: 'user', parts: [{ text: r.user }] }],
        config: {
          systemInstruction: r.system,
          temperature: 0,
          responseMimeType: 'application/json',
          responseJsonSchema: r.schema,
          ...(r.signal ? { abortSignal: r.signal } : {}),
        },
      });
    } catch (error) {
      throw toLlmError(error, this.name);
    }
    const m = response.usageMetadata;
    const input = m?.promptTokenCount ?? 0;
    const output = m?.candidatesTokenCount ?? 0;
    const thoughts = m?.thoughtsTokenCount ?? 0;
    const usage = {
      input_tokens: input,
      output_tokens: output,
      total_tokens: m?.totalTokenCount ?? input + output + thoughts,
      cached_tokens: m?.cachedContentTokenCount ?? 0,
      thoughts_tokens: thoughts,
    };
    const candidate = response.candidates?.[0];
    const finish = candidate?.finishReason;
    const blocked = response.promptFeedback?.blockReason;
    const refusal = blocked
      ? `prompt blocked (${blocked})`
      : finish !== undefined && ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII'].includes(finish)
        ? `answer blocked (${finish})`
        : undefined;
    const text = (candidate?.content?.parts ?? []).map((p) => (p.thought ? '' : (p.text ?? ''))).join('');
    return { text, refusal, usage };
  }
}

function toLlmError(error: unknown, provider: string): LlmError {
  if (error instanceof LlmError) return error;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof LlmError) return cause;
  if (error instanceof ApiError) {
    const transient = error.status === 429 || error.status >= 500 || error.status === 408;
    return new LlmError(
      `${provider}: the LLM answered HTTP ${error.status} (${error.message.slice(0, 300)}).`,
      transient ? 'unavailable' : 'rejected',
    );
  }
  if ((error as Error).name === 'AbortError') return new LlmError('The LLM call was cancelled.', 'aborted');
  return new LlmError(`${provider}: ${error instanceof Error ? error.message : String(error)}`, 'unavailable');
}
