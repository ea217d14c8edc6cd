import type { RetainItem } from '@mnemos/client';
import { memoryBlock } from './memory-text.js';
import { checkScope, type MemoryScope, type RecallSettings } from './scope.js';
import { turnContent } from './turns.js';

/** Settings of the adapters that put memories into the prompt and store the exchange (AI SDK middleware, Mastra). */
export interface PromptMemoryOptions extends MemoryScope {
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

/**
 * The two memory calls around a model call, bound to one bank: the memories about the user's message as a block for
 * the system prompt, and the exchange stored as labelled turns afterwards.
 */
export function promptMemory(options: PromptMemoryOptions, adapter: string) {
  checkScope(options, adapter);
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

  return {
    /** The memories recalled for the user's message as one block of text, or undefined when there are none. */
    async recallBlock(question: string, signal?: AbortSignal): Promise<string | undefined> {
      const recalled = await guarded('recall', () =>
        client.recall(bankId, question, { ...recallSettings, space, signal }),
      );
      // The question itself, stored by an earlier step or conversation, tells the model nothing.
      const echo = turnContent('user', question);
      return memoryBlock(
        (recalled?.results ?? []).filter((hit) => hit.text !== echo),
        options.heading,
      );
    },
    /** Stores the user's message (when given) and the answer, as the retain setting says. */
    async retainTurns(question: string | undefined, answer: string, signal?: AbortSignal): Promise<void> {
      if (retainMode === 'none') return;
      const items: RetainItem[] = [];
      const tags = options.tags && options.tags.length > 0 ? options.tags : undefined;
      if (question !== undefined) {
        items.push({ content: turnContent('user', question), tags, metadata: { role: 'user' } });
      }
      if (retainMode === 'exchange' && answer !== '') {
        items.push({ content: turnContent('assistant', answer), tags, metadata: { role: 'assistant' } });
      }
      if (items.length === 0) return;
      await guarded('retain', () => client.retainBatch(bankId, items, { space, signal }));
    },
  };
}
