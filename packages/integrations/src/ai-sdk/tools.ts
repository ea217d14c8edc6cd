import { tool } from 'ai';
import { checkScope } from '../shared/scope.js';
import {
  memoryToolCalls,
  recallInput,
  reflectInput,
  retainInput,
  TOOL_DESCRIPTIONS,
  type MemoryToolOptions,
} from '../shared/tool-specs.js';

/**
 * Mnemos memory as Vercel AI SDK tools (`retain`, `recall`, `reflect`) bound to one bank; spread them into the
 * `tools` of `generateText`, `streamText` or an agent.
 *
 * ```ts
 * const result = await generateText({ model, tools: { ...mnemosTools({ client, bankId: 'alice' }) }, prompt });
 * ```
 */
export function mnemosTools(options: MemoryToolOptions) {
  checkScope(options, 'mnemosTools');
  const calls = memoryToolCalls(options);
  return {
    retain: tool({
      description: TOOL_DESCRIPTIONS.retain,
      inputSchema: retainInput,
      execute: (input, { abortSignal }) => calls.retain(input, abortSignal),
    }),
    recall: tool({
      description: TOOL_DESCRIPTIONS.recall,
      inputSchema: recallInput,
      execute: (input, { abortSignal }) => calls.recall(input, abortSignal),
    }),
    reflect: tool({
      description: TOOL_DESCRIPTIONS.reflect,
      inputSchema: reflectInput,
      execute: (input, { abortSignal }) => calls.reflect(input, abortSignal),
    }),
  };
}
