// @mnemos/integrations/openai-agents: Mnemos memory as OpenAI Agents SDK (`@openai/agents`) function tools.
export { mnemosAgentTools } from './tools.js';
export type { MemoryToolOptions, RetainOutput, RecallOutput, ReflectOutput, ToolMemory } from '../shared/tool-specs.js';
export type { MemoryScope, RecallSettings } from '../shared/scope.js';
