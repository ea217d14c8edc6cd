/** The one interface every LLM provider implements: a structured-output chat call, whole or streamed. */

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cached_tokens: number;
  thoughts_tokens: number;
}

export const ZERO_USAGE: Usage = {
  input_tokens: 0,
  output_tokens: 0,
  total_tokens: 0,
  cached_tokens: 0,
  thoughts_tokens: 0,
};

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
    cached_tokens: a.cached_tokens + b.cached_tokens,
    thoughts_tokens: a.thoughts_tokens + b.thoughts_tokens,
  };
}

export interface GenerateRequest {
  system: string;
  user: string;
  /** JSON Schema the answer must follow (sent as the provider's structured-output format). */
  schema: Record<string, unknown>;
  schemaName: string;
  signal?: AbortSignal | undefined;
}

export interface GenerateResult {
  /** The raw answer text (JSON when the provider honoured the schema). */
  text: string;
  /** Set when the model declined to answer (OpenAI refusal, Gemini safety block). */
  refusal: string | undefined;
  usage: Usage;
}

export interface StreamRequest extends GenerateRequest {
  /** Called with each piece of answer text as the provider sends it. */
  onText: (delta: string) => void;
}

export interface LlmProvider {
  readonly name: string;
  readonly model: string;
  generate(request: GenerateRequest): Promise<GenerateResult>;
  /** The same call streamed in the provider's own wire format; resolves to the whole answer once it is complete. */
  stream(request: StreamRequest): Promise<GenerateResult>;
}

/** Why an LLM call failed; `transient` failures are worth retrying later (the job queue does). */
export class LlmError extends Error {
  override readonly name = 'LlmError';
  constructor(
    message: string,
    readonly kind: 'timeout' | 'unavailable' | 'rejected' | 'malformed' | 'refused' | 'aborted',
    readonly usage: Usage = ZERO_USAGE,
  ) {
    super(message);
  }

  get transient(): boolean {
    return this.kind === 'timeout' || this.kind === 'unavailable' || this.kind === 'aborted';
  }
}
