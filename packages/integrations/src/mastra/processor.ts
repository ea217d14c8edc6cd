import type { MastraDBMessage, MessageList } from '@mastra/core/agent';
import type { ProcessInputArgs, ProcessOutputResultArgs, Processor } from '@mastra/core/processors';
import { promptMemory, type PromptMemoryOptions } from '../shared/prompt-memory.js';

/** Settings of `MnemosMemoryProcessor`: the bank, the recall before each run, what is stored after it and on failure. */
export type MnemosMemoryProcessorOptions = PromptMemoryOptions;

/** The text of a stored Mastra message: its text parts, or its plain content when it has no parts. */
function messageText(message: MastraDBMessage): string {
  const parts = message.content.parts.flatMap((part) => (part.type === 'text' ? [part.text] : []));
  return (parts.length > 0 ? parts.join('\n') : (message.content.content ?? '')).trim();
}

/** The user's latest message of this run's input (not of the thread's history): what memories are recalled for. */
function latestUserText(messageList: MessageList): string | undefined {
  const message = messageList.get.input.db().findLast((m) => m.role === 'user');
  const text = message === undefined ? '' : messageText(message);
  return text === '' ? undefined : text;
}

/**
 * The text the agent answered in this run, from every step. Read from the message list, which every 1.x release
 * passes to output processors (the run's result object is a later addition).
 */
function answerText(messageList: MessageList): string {
  return messageList.get.response
    .db()
    .filter((m) => m.role === 'assistant')
    .map(messageText)
    .filter((text) => text !== '')
    .join('\n');
}

/**
 * A Mastra processor that gives an agent long-term memory: as an input processor it recalls what the bank holds about
 * the user's message once per run and adds it as a system message, which every step of the run sees; as an output
 * processor it stores the user's message and the final answer. Put the same instance in both lists.
 *
 * ```ts
 * const memory = new MnemosMemoryProcessor({ client, bankId: 'alice' });
 * const agent = new Agent({ id: 'assistant', name: 'Assistant', instructions, model,
 *   inputProcessors: [memory], outputProcessors: [memory] });
 * ```
 */
export class MnemosMemoryProcessor implements Processor<'mnemos-memory'> {
  readonly id = 'mnemos-memory';
  readonly name = 'Mnemos memory';
  readonly #memory: ReturnType<typeof promptMemory>;

  constructor(options: MnemosMemoryProcessorOptions) {
    this.#memory = promptMemory(options, 'MnemosMemoryProcessor');
  }

  async processInput({ messageList, abortSignal }: ProcessInputArgs): Promise<MessageList> {
    const question = latestUserText(messageList);
    if (question === undefined) return messageList;
    const block = await this.#memory.recallBlock(question, abortSignal);
    // The tag keeps the block apart from the agent's own instructions, as Mastra's own memory processors do.
    if (block !== undefined) messageList.addSystem(block, 'mnemos-memory');
    return messageList;
  }

  async processOutputResult({ messageList, abortSignal }: ProcessOutputResultArgs): Promise<MessageList> {
    await this.#memory.retainTurns(latestUserText(messageList), answerText(messageList), abortSignal);
    return messageList;
  }
}
