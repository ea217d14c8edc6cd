import type { LanguageModelMiddleware } from 'ai';
import { promptMemory, type PromptMemoryOptions } from '../shared/prompt-memory.js';

type CallOptions = Parameters<NonNullable<LanguageModelMiddleware['transformParams']>>[0]['params'];
type Prompt = CallOptions['prompt'];
type GenerateResult = Awaited<ReturnType<NonNullable<LanguageModelMiddleware['wrapGenerate']>>>;
type StreamPart =
  Awaited<ReturnType<NonNullable<LanguageModelMiddleware['wrapStream']>>>['stream'] extends ReadableStream<infer P>
    ? P
    : never;

/** Settings of `mnemosMemory`: the bank, the recall before each call, what is stored after it and on failure. */
export type MemoryMiddlewareOptions = PromptMemoryOptions;

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
  const memory = promptMemory(options, 'mnemosMemory');

  return {
    specificationVersion: 'v3',
    async transformParams({ params }) {
      const question = latestUserText(params.prompt);
      if (question === undefined) return params;
      const block = await memory.recallBlock(question, params.abortSignal);
      return block === undefined ? params : { ...params, prompt: withMemories(params.prompt, block) };
    },
    async wrapGenerate({ doGenerate, params }) {
      const result = await doGenerate();
      await memory.retainTurns(newUserText(params.prompt), answerText(result), params.abortSignal);
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
          await memory.retainTurns(question, answer.trim(), params.abortSignal);
        },
      });
      return { stream: stream.pipeThrough(remembering), ...rest };
    },
  };
}
