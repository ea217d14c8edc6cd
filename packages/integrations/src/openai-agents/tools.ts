import { tool } from '@openai/agents-core';
import { checkScope } from '../shared/scope.js';
import {
  memoryErrorText,
  memoryToolCalls,
  recallInput,
  reflectInput,
  retainInput,
  TOOL_DESCRIPTIONS,
  type MemoryToolOptions,
} from '../shared/tool-specs.js';

/**
 * Mnemos memory as OpenAI Agents SDK function tools (`retain`, `recall`, `reflect`) bound to one bank. A failed call
 * reaches the model as the tool's answer, saying what went wrong, so the agent can go on without memory.
 *
 * ```ts
 * const agent = new Agent({ name: 'Assistant', tools: mnemosAgentTools({ client, bankId: 'alice' }) });
 * ```
 */
export function mnemosAgentTools(options: MemoryToolOptions) {
  checkScope(options, 'mnemosAgentTools');
  const calls = memoryToolCalls(options);
  const errorFunction = (_context: unknown, error: unknown) => memoryErrorText(error);
  return [
    tool({
      name: 'retain',
      description: TOOL_DESCRIPTIONS.retain,
      parameters: retainInput,
      execute: (input, _context, details) => calls.retain(input, details?.signal),
      errorFunction,
    }),
    tool({
      name: 'recall',
      description: TOOL_DESCRIPTIONS.recall,
      parameters: recallInput,
      execute: (input, _context, details) => calls.recall(input, details?.signal),
      errorFunction,
    }),
    tool({
      name: 'reflect',
      description: TOOL_DESCRIPTIONS.reflect,
      parameters: reflectInput,
      execute: (input, _context, details) => calls.reflect(input, details?.signal),
      errorFunction,
    }),
  ];
}
