import type { LanguageModelMiddleware } from 'ai';
import type { RetainItem } from '@mnemos/client';
import { memoryBlock } from '../shared/memory-text.js';
import { checkScope, type MemoryScope, type RecallSettings } from '../shared/scope.js';
import { turnContent } from '../shared/turns.js';

type CallOptions = Parameters<NonNullable<LanguageModelMiddleware['transformParams']>>[0]['params'];
type Prompt = CallOptions['prompt'];
type GenerateResult = Awaited<ReturnType<NonNullable<LanguageModelMiddleware['wrapGenerate']>>>;
type StreamPart =
  Awaited<ReturnType<NonNullable<LanguageModelMiddleware['wrapStream']>>>['stream'] extends ReadableStream<infer P>
    ? P
    : never;

export interface MemoryMiddlewareOptions extends MemoryScope {
  /** Settings of the recall before each call; `max_tokens` defaults to DEFAULT_PROMPT_MEMORY_TOKENS. */
  recall?: RecallSettings | undefined;
  /** What is stored after each call: the user's message and the answer (default), only the user's, or nothing. */
  retain?: 'exchange' | 'user' | 'none' | undefined;
  /** Tags added to every stored turn. */
  tags?: string[] | undefined;
  /** The line above the recalled memories in the system prompt. */
  heading?: string | undefined;
  /**
   * Called when recall or retain fails; the model call then goes on without memory. Without it the failure fails the
   * call, so a misconfigured memory service is noticed.
   */
  onError?: ((error: unknown, phase: 'recall' | 'retain') => void) | undefined;
}

/**
 * How many tokens of memories go into each prompt unless `recall.max_tokens` says otherwise: enough for a dozen
 * typical memories, while the engine's own default (4096) would add that much to every single call.
 */
export const DEFAULT_PROMPT_MEMORY_TOKENS = 1024;

/** The text of the user's latest message in the prompt: what the memories are recalled for. */
function latestUserText(prompt: Prompt): string | undefined {
  const message = prompt.findLast((m) => m.role === 'user');
  if (message?.role !== 'user') return undefined;
  const text = message.content
    .flatMap((part) => (part.type === 'text' ? [part.text] : []))
    .join('\n')
    .trim();
  return text === '' ? undefined : text;
}

/**
 * The user's message when this call answers it directly (it is the prompt's last message). Later steps of a tool loop
 * end with tool results; the message was stored at the first step.
 */
function newUserText(prompt: Prompt): string | undefined {
  return prompt[prompt.length - 1]?.role === 'user' ? latestUserText(prompt) : undefined;
}

/** The prompt with the memory block as a system message after the leading system messages. */
function withMemories(prompt: Prompt, block: string): Prompt {
  const at = prompt.findIndex((message) => message.role !== 'system');
  const index = at < 0 ? prompt.length : at;
  return [...prompt.slice(0, index), { role: 'system', content: block }, ...prompt.slice(index)];
}

function answerText(result: GenerateResult): string {
  return result.content
    .flatMap((part) => (part.type === 'text' ? [part.text] : []))
    .join('')
    .trim();
}

/**
 * A language-model middleware that gives any AI SDK model long-term memory: before each call it recalls what the
 * bank holds about the user's latest message and adds it to the system prompt; after the call it stores the user's
 * message and the answer. Every step of a tool loop sees the memories; the user's message is stored once.
 *
 * ```ts
 * const model = wrapLanguageModel({ model: openai('gpt-4o'), middleware: mnemosMemory({ client, bankId: 'alice' }) });
 * ```
 */
export function mnemosMemory(options: MemoryMiddlewareOptions): LanguageModelMiddleware {
  checkScope(options, 'mnemosMemory');
  const { client, bankId, space } = options;
  const retainMode = options.retain ?? 'exchange';
  const recallSettings: RecallSettings = { max_tokens: DEFAULT_PROMPT_MEMORY_TOKENS, ...options.recall };

  async function guarded<T>(phase: 'recall' | 'retain', work: () => Promise<T>): Promise<T | undefined> {
    try {
      return await work();
    } catch (error) {
      if (options.onError === undefined) throw error;
      options.onError(error, phase);
      return undefined;
    }
  }

  function retainTurns(question: string | undefined, answer: string, signal?: AbortSignal): Promise<unknown> {
    if (retainMode === 'none') return Promise.resolve();
    const items: RetainItem[] = [];
    const tags = options.tags && options.tags.length > 0 ? options.tags : undefined;
    if (question !== undefined) {
      items.push({ content: turnContent('user', question), tags, metadata: { role: 'user' } });
    }
    if (retainMode === 'exchange' && answer !== '') {
      items.push({ content: turnContent('assistant', answer), tags, metadata: { role: 'assistant' } });
    }
    if (items.length === 0) return Promise.resolve();
    return guarded('retain', () => client.retainBatch(bankId, items, { space, signal }));
  }

  return {
    specificationVersion: 'v3',
    async transformParams({ params }) {
      const question = latestUserText(params.prompt);
      if (question === undefined) return params;
      const recalled = await guarded('recall', () =>
        client.recall(bankId, question, { ...recallSettings, space, signal: params.abortSignal }),
      );
      // The question itself, stored by an earlier step or conversation, tells the model nothing.
      const echo = turnContent('user', question);
      const block = memoryBlock(
        (recalled?.results ?? []).filter((hit) => hit.text !== echo),
        options.heading,
      );
      return block === undefined ? params : { ...params, prompt: withMemories(params.prompt, block) };
    },
    async wrapGenerate({ doGenerate, params }) {
      const result = await doGenerate();
      await retainTurns(newUserText(params.prompt), answerText(result), params.abortSignal);
      return result;
    },
    async wrapStream({ doStream, params }) {
      const { stream, ...rest } = await doStream();
      const question = newUserText(params.prompt);
      let answer = '';
      const remembering = new TransformStream<StreamPart, StreamPart>({
        transform(part, controller) {
          if (part.type === 'text-delta') answer += part.delta;
          controller.enqueue(part);
        },
        async flush() {
          await retainTurns(question, answer.trim(), params.abortSignal);
        },
      });
      return { stream: stream.pipeThrough(remembering), ...rest };
    },
  };
}
