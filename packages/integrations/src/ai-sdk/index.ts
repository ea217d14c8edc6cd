// @mnemos/integrations/ai-sdk: Mnemos memory for the Vercel AI SDK (`ai`): tools and a language-model middleware.
export { mnemosTools } from './tools.js';
export { mnemosMemory, type MemoryMiddlewareOptions } from './middleware.js';
export { DEFAULT_PROMPT_MEMORY_TOKENS } from '../shared/prompt-memory.js';
export type { MemoryToolOptions, RetainOutput, RecallOutput, ReflectOutput, ToolMemory } from '../shared/tool-specs.js';
export type { MemoryScope, RecallSettings } from '../shared/scope.js';
