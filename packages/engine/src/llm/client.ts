import pLimit, { type LimitFunction } from 'p-limit';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { LlmConfig } from '../config/load.js';
import { BASE_DELAY_MS, MAX_DELAY_MS, resilientFetch, streamingFetch, type RetryPolicy } from './fetch.js';
import { GeminiProvider } from './gemini.js';
import { OpenAiProvider } from './openai.js';
import type { LlmTransport } from './transport.js';
import {
  addUsage,
  LlmError,
  ZERO_USAGE,
  type GenerateRequest,
  type GenerateResult,
  type LlmProvider,
  type Usage,
} from './types.js';

/** `transport`: send the HTTP requests through the LLM transport thread (the engine does; see transport.ts). */
export function createProvider(
  config: LlmConfig,
  onRetry?: (reason: string, delayMs: number) => void,
  transport?: LlmTransport,
): LlmProvider {
  const policy: RetryPolicy = {
    timeoutMs: config.timeoutMs,
    maxRetries: config.maxRetries,
    baseDelayMs: BASE_DELAY_MS,
    maxDelayMs: MAX_DELAY_MS,
    ...(onRetry ? { onRetry } : {}),
  };
  const fetchImpl = resilientFetch(policy, transport);
  const streamFetch = streamingFetch(policy);
  switch (config.provider) {
    case 'openai':
    case 'litellm':
      return new OpenAiProvider(config, fetchImpl, streamFetch);
    case 'gemini':
    case 'vertex':
      return new GeminiProvider(config, fetchImpl, streamFetch);
  }
}

export interface StructuredRequest<T> extends GenerateRequest {
  /** Checks the parsed answer; returns the typed value or a one-line reason it is not acceptable. */
  validate: (value: unknown) => { ok: true; value: T } | { ok: false; reason: string };
  /** What the call is for (metrics label): extract, reflect. */
  purpose: string;
}

/**
 * Every LLM call goes through here: a concurrency cap shared by extraction and reflect (calls admitted at once; with
 * the transport thread, which caps the requests actually in flight, the engine admits twice as many so the next ones
 * are ready to leave), structured-output parsing and
 * validation (a malformed or refused answer is asked again, up to `attempts` times), token usage summed over attempts,
 * and Prometheus counters.
 */
export class LlmClient {
  /** Calls in flight at most `concurrency`; the rest wait in arrival order. */
  private readonly limiter: LimitFunction;
  private readonly calls: Counter<'provider' | 'purpose' | 'outcome'>;
  private readonly tokens: Counter<'provider' | 'purpose' | 'direction'>;
  private readonly seconds: Histogram<'provider' | 'purpose'>;
  private readonly retries: Counter<'provider'>;

  constructor(
    readonly provider: LlmProvider,
    concurrency: number,
    registry: Registry,
    readonly attempts = 3,
  ) {
    this.limiter = pLimit(concurrency);
    this.calls = new Counter({
      name: 'mnemos_llm_calls_total',
      help: 'LLM calls by purpose and outcome',
      labelNames: ['provider', 'purpose', 'outcome'],
      registers: [registry],
    });
    this.tokens = new Counter({
      name: 'mnemos_llm_tokens_total',
      help: 'LLM tokens by purpose and direction',
      labelNames: ['provider', 'purpose', 'direction'],
      registers: [registry],
    });
    this.seconds = new Histogram({
      name: 'mnemos_llm_call_duration_seconds',
      help: 'LLM call latency',
      labelNames: ['provider', 'purpose'],
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
      registers: [registry],
    });
    this.retries = new Counter({
      name: 'mnemos_llm_http_retries_total',
      help: 'LLM HTTP attempts retried (429, 5xx, timeouts)',
      labelNames: ['provider'],
      registers: [registry],
    });
  }

  /** Counts one HTTP retry (wired from the fetch layer). */
  noteRetry(): void {
    this.retries.inc({ provider: this.provider.name });
  }

  async structured<T>(r: StructuredRequest<T>): Promise<{ value: T; usage: Usage }> {
    let usage = ZERO_USAGE;
    let reason = '';
    for (let attempt = 1; attempt <= this.attempts; attempt++) {
      const outcome = await this.attempt(r, () => this.provider.generate(r), usage);
      usage = outcome.usage;
      if (outcome.ok) return outcome;
      reason = outcome.reason;
    }
    throw this.gaveUp(reason, this.attempts, usage);
  }

  /**
   * The same call streamed: `onText` sees the answer text as it arrives, and the whole answer is parsed and validated
   * as `structured` does, counted the same way. A bad answer is not asked again (its text has already been passed on).
   */
  async streamed<T>(
    r: StructuredRequest<T> & { onText: (delta: string) => void },
  ): Promise<{ value: T; usage: Usage }> {
    const outcome = await this.attempt(r, () => this.provider.stream(r), ZERO_USAGE);
    if (outcome.ok) return outcome;
    throw this.gaveUp(outcome.reason, 1, outcome.usage);
  }

  /** One call: admitted under the cap, timed, its tokens counted, its answer parsed and validated. */
  private async attempt<T>(
    r: StructuredRequest<T>,
    call: () => Promise<GenerateResult>,
    before: Usage,
  ): Promise<{ ok: true; value: T; usage: Usage } | { ok: false; reason: string; usage: Usage }> {
    const labels = { provider: this.provider.name, purpose: r.purpose };
    const stop = this.seconds.startTimer(labels);
    let result;
    try {
      result = await this.limiter(call);
    } catch (error) {
      this.calls.inc({ ...labels, outcome: 'error' });
      const e = error instanceof LlmError ? error : new LlmError(String(error), 'unavailable');
      throw new LlmError(e.message, e.kind, addUsage(before, e.usage));
    } finally {
      stop();
    }
    const usage = addUsage(before, result.usage);
    this.tokens.inc({ ...labels, direction: 'input' }, result.usage.input_tokens);
    this.tokens.inc({ ...labels, direction: 'output' }, result.usage.output_tokens);
    if (result.refusal !== undefined) {
      this.calls.inc({ ...labels, outcome: 'refused' });
      return { ok: false, reason: `the model refused (${result.refusal.slice(0, 200)})`, usage };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(stripFences(result.text));
    } catch {
      this.calls.inc({ ...labels, outcome: 'malformed' });
      return {
        ok: false,
        reason: `the answer was not valid JSON (${JSON.stringify(result.text.slice(0, 120))})`,
        usage,
      };
    }
    const checked = r.validate(parsed);
    if (!checked.ok) {
      this.calls.inc({ ...labels, outcome: 'malformed' });
      return { ok: false, reason: `the answer did not match the expected shape: ${checked.reason}`, usage };
    }
    this.calls.inc({ ...labels, outcome: 'ok' });
    return { ok: true, value: checked.value, usage };
  }

  private gaveUp(reason: string, attempts: number, usage: Usage): LlmError {
    return new LlmError(
      `${this.provider.name} ${this.provider.model}: ${reason}; gave up after ${attempts} attempt${attempts === 1 ? '' : 's'}.`,
      reason.startsWith('the model refused') ? 'refused' : 'malformed',
      usage,
    );
  }
}

/** Some OpenAI-compatible servers wrap JSON in a Markdown fence even in JSON mode. */
function stripFences(text: string): string {
  const t = text.trim();
  const m = /^```(?:json)?\s*([\s\S]*?)\s*```$/i.exec(t);
  return m ? m[1]! : t;
}
