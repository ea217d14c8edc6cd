import { createTool } from '@mastra/core/tools';
import { memoryToolSpecs, type MemoryToolOptions, type MemoryToolSpec } from '../shared/tool-specs.js';

/** A memory tool as a Mastra tool; a failed call becomes the tool's error, which Mastra hands to the model. */
function mastraTool<Id extends string, Input, Output>(id: Id, spec: MemoryToolSpec<Input, Output>) {
  return createTool({
    id,
    description: spec.description,
    inputSchema: spec.inputSchema,
    execute: (input: Input, context) => spec.call(input, context.abortSignal),
  });
}

/**
 * Mnemos memory as Mastra tools (`retain`, `recall`, `reflect`) bound to one bank; spread them into an agent's
 * `tools`.
 *
 * ```ts
 * const agent = new Agent({ id: 'assistant', name: 'Assistant', instructions, model,
 *   tools: { ...mnemosMastraTools({ client, bankId: 'alice' }) } });
 * ```
 */
export function mnemosMastraTools(options: MemoryToolOptions) {
  const specs = memoryToolSpecs(options, 'mnemosMastraTools');
  return {
    retain: mastraTool('retain', specs.retain),
    recall: mastraTool('recall', specs.recall),
    reflect: mastraTool('reflect', specs.reflect),
  };
}
