import { z } from 'zod';
import { MnemosError, type RecallHit } from '@mnemos/client';
import { checkScope, type MemoryScope, type RecallSettings } from './scope.js';

/**
 * The three memory tools every framework adapter offers (retain, recall, reflect), independent of any framework: a
 * name, a description written for the model, a zod input schema and the call it makes. Each adapter wraps these in
 * its framework's own tool type, so the tools behave the same everywhere.
 */

export const retainInput = z.object({
  content: z
    .string()
    .min(1)
    .max(100_000)
    .describe(
      'One durable fact, preference, decision or event as a self-contained sentence, e.g. "Alice prefers green tea."',
    ),
  occurred_at: z
    .string()
    .optional()
    .describe('Optional ISO 8601 date or date-time when it happened (defaults to now).'),
  tags: z.array(z.string().max(256)).max(100).optional().describe('Optional tags to filter recall by later.'),
});

export const recallInput = z.object({
  query: z.string().min(1).max(10_000).describe('A question or keywords, e.g. "What does Alice drink?".'),
});

export const reflectInput = z.object({
  question: z.string().min(1).max(10_000).describe('The question to answer from memory.'),
});

export type RetainInput = z.infer<typeof retainInput>;
export type RecallInput = z.infer<typeof recallInput>;
export type ReflectInput = z.infer<typeof reflectInput>;

/** A recalled memory as a tool answers it: what the model needs, without the engine's scoring details. */
export interface ToolMemory {
  id: string;
  text: string;
  type: string;
  occurred_at: string | null;
  score: number;
  /** The chance, 0 to 1, that the memory answers the query (absent from an engine that does not give it). */
  relevance?: number;
}

export interface RetainOutput {
  memory_ids: string[];
}
export interface RecallOutput {
  memories: ToolMemory[];
}
export interface ReflectOutput {
  answer: string;
  citations: string[];
}

export interface MemoryToolOptions extends MemoryScope {
  /** Settings of the recall tool's searches (for example `max_tokens`, `budget`, `types`). */
  recall?: RecallSettings | undefined;
  /** Tags added to every memory the retain tool stores (for example the agent's name). */
  tags?: string[] | undefined;
}

export const TOOL_DESCRIPTIONS = {
  retain:
    'Store a memory about the user or the work: one durable fact, preference, decision or event, written as a ' +
    'self-contained sentence. It is recallable as soon as this returns; identical text is kept once.',
  recall:
    'Search long-term memory for what is relevant to a question (semantic, keyword and time-aware search); answers ' +
    'the best matches first, each with its relevance (the chance, 0 to 1, that it answers the question). Use it ' +
    'before answering anything that depends on what was learned earlier.',
  reflect:
    'Answer a question from long-term memory only, with the ids of the memories the answer cites; it says so when ' +
    'memory does not hold the answer.',
} as const;

export function toolMemory(hit: RecallHit): ToolMemory {
  const memory: ToolMemory = {
    id: hit.id,
    text: hit.text,
    type: hit.type,
    occurred_at: hit.occurred_at,
    score: hit.score,
  };
  if (hit.relevance !== undefined) memory.relevance = hit.relevance;
  return memory;
}

/** The calls behind the three tools, bound to one bank. */
export function memoryToolCalls(options: MemoryToolOptions) {
  const { client, bankId, space } = options;
  const extraTags = options.tags ?? [];
  return {
    async retain(input: RetainInput, signal?: AbortSignal): Promise<RetainOutput> {
      const tags = [...extraTags, ...(input.tags ?? [])];
      const stored = await client.retain(bankId, input.content, {
        space,
        signal,
        timestamp: input.occurred_at,
        tags: tags.length > 0 ? tags : undefined,
      });
      return { memory_ids: stored.memory_ids };
    },
    async recall(input: RecallInput, signal?: AbortSignal): Promise<RecallOutput> {
      const answer = await client.recall(bankId, input.query, { ...options.recall, space, signal });
      return { memories: answer.results.map(toolMemory) };
    },
    async reflect(input: ReflectInput, signal?: AbortSignal): Promise<ReflectOutput> {
      const answer = await client.reflect(bankId, input.question, { space, signal });
      return { answer: answer.text, citations: answer.citations };
    },
  };
}

/** One memory tool without a framework: what the model reads about it, its input schema and the call it makes. */
export interface MemoryToolSpec<Input, Output> {
  description: string;
  inputSchema: z.ZodType<Input>;
  call: (input: Input, signal?: AbortSignal) => Promise<Output>;
}

/** The three memory tools bound to one bank, for an adapter to wrap in its framework's tool type. */
export function memoryToolSpecs(options: MemoryToolOptions, adapter: string) {
  checkScope(options, adapter);
  const calls = memoryToolCalls(options);
  const retain: MemoryToolSpec<RetainInput, RetainOutput> = {
    description: TOOL_DESCRIPTIONS.retain,
    inputSchema: retainInput,
    call: (input, signal) => calls.retain(input, signal),
  };
  const recall: MemoryToolSpec<RecallInput, RecallOutput> = {
    description: TOOL_DESCRIPTIONS.recall,
    inputSchema: recallInput,
    call: (input, signal) => calls.recall(input, signal),
  };
  const reflect: MemoryToolSpec<ReflectInput, ReflectOutput> = {
    description: TOOL_DESCRIPTIONS.reflect,
    inputSchema: reflectInput,
    call: (input, signal) => calls.reflect(input, signal),
  };
  return { retain, recall, reflect };
}

/**
 * A failed memory call as text a model can act on: the service's own code and explanation for a Mnemos error, and a
 * generic line for anything else (whose message may hold internals).
 */
export function memoryErrorText(error: unknown): string {
  if (error instanceof MnemosError) return `Memory error ${error.code}: ${error.detail}`;
  return 'Memory error: the memory service failed unexpectedly; go on without it.';
}
