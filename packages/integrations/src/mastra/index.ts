// @mnemos/integrations/mastra: Mnemos memory for Mastra (`@mastra/core`): tools and a memory processor.
export { mnemosMastraTools } from './tools.js';
export { MnemosMemoryProcessor, type MnemosMemoryProcessorOptions } from './processor.js';
export { DEFAULT_PROMPT_MEMORY_TOKENS } from '../shared/prompt-memory.js';
export type { MemoryToolOptions, RetainOutput, RecallOutput, ReflectOutput, ToolMemory } from '../shared/tool-specs.js';
export type { MemoryScope, RecallSettings } from '../shared/scope.js';
