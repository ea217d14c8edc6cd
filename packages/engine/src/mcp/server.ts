import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ENGINE_VERSION } from '../version.js';
import { BANK_ID_PATTERN, SPACE_PATTERN } from '../wire/schemas.js';
import { MEMORY_TYPES } from '../memory/types.js';
import type { MemoryBackend } from './backend.js';

export interface McpServerOptions {
  /** Fixes the bank (the URL `/mcp/{bank}` or `mnemos mcp --bank`): tools then take no `bank_id`. */
  bank?: string | undefined;
  /** Called with failures that are not the user's (a bug or an outage), for the log. */
  onInternalError?: ((error: unknown) => void) | undefined;
}

const BankId = z
  .string()
  .regex(new RegExp(BANK_ID_PATTERN))
  .describe(
    'The memory bank: one subject (a user, an agent, a project), e.g. "alice@example.com". Banks are created by the first retain.',
  );
/** A filter expression; the engine reads it and answers a bad node with its JSON pointer. */
const Filter = z
  .record(z.string(), z.unknown())
  .optional()
  .describe(
    'Only memories matching this filter: and/or/not over {FIELD: {OP: VALUE}}, fields metadata.<key>, tags, type, timestamp, created_at, updated_at, expires_at, space, document_id; ops eq, ne, in, nin, gt, gte, lt, lte, contains, exists. E.g. {"and": [{"metadata.project": "apollo"}, {"timestamp": {"gte": "2024-01-01"}}]}.',
  );

const Space = z
  .string()
  .regex(new RegExp(SPACE_PATTERN))
  .optional()
  .describe(
    'Optional space (organization) that partitions the bank; omit for the default space. Recall only sees memories of the same space.',
  );
const Budget = z.enum(['low', 'mid', 'high']).optional();

/** An error with a stable code and a sentence: what Problem (engine) and MnemosError (client) both carry. */
function isCodedError(error: unknown): error is { status: number; code: string; detail: string } {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as Record<string, unknown>;
  return typeof e['status'] === 'number' && typeof e['code'] === 'string' && typeof e['detail'] === 'string';
}

const text = (value: unknown): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value, null, 2) }],
});

/** Recall hits as a model reads them best: the text first, with its id, type, date, score and relevance. */
/** Which memories a read answers by their validity: current ones unless asked otherwise. */
const Validity = {
  as_of: z
    .string()
    .max(64)
    .optional()
    .describe('An RFC 3339 date-time: answer what was true then instead of what is true now.'),
  include_superseded: z
    .boolean()
    .optional()
    .describe('Also answer memories that were replaced or expired (marked with valid_to).'),
};

function compactHits(results: object[]): object[] {
  return results.map((hit) => {
    const h = hit as Record<string, unknown>;
    const tags = Array.isArray(h['tags']) && h['tags'].length > 0 ? { tags: h['tags'] } : {};
    return {
      text: h['text'],
      id: h['id'],
      type: h['type'],
      occurred_at: h['occurred_at'] ?? h['created_at'],
      score: typeof h['score'] === 'number' ? Math.round(h['score'] * 1000) / 1000 : h['score'],
      ...(typeof h['relevance'] === 'number' ? { relevance: Math.round(h['relevance'] * 1000) / 1000 } : {}),
      ...(h['space'] !== 'default' ? { space: h['space'] } : {}),
      ...(h['org'] === true ? { org: true } : {}),
      ...(typeof h['valid_to'] === 'string' ? { valid_to: h['valid_to'], superseded_by: h['superseded_by'] } : {}),
      ...(typeof h['expires_at'] === 'string' ? { expires_at: h['expires_at'] } : {}),
      ...tags,
    };
  });
}

/** The Mnemos MCP server: seven tools over a backend (in-process engine or HTTP). */
export function createMcpServer(backend: MemoryBackend, options: McpServerOptions = {}): McpServer {
  const fixed = options.bank;
  const server = new McpServer(
    { name: 'mnemos', title: 'Mnemos memory', version: ENGINE_VERSION },
    {
      instructions:
        'Mnemos is persistent memory. Use `recall` before answering questions about a user or past work, `retain` to store durable facts, preferences and decisions as short self-contained sentences, and `reflect` for a synthesised answer with citations.' +
        (fixed ? ` Every tool works on the bank "${fixed}".` : ' Every tool except list_banks takes a bank_id.'),
    },
  );

  /** The input schema: `bank_id` is required unless the bank is fixed, in which case it is not offered. */
  function input<S extends z.ZodRawShape>(shape: S) {
    const schema = fixed === undefined ? z.object({ bank_id: BankId, ...shape }) : z.object(shape);
    return schema as unknown as z.ZodType<z.output<z.ZodObject<S>> & { bank_id?: string }>;
  }
  const bankOf = (args: { bank_id?: string | undefined }): string => fixed ?? args.bank_id ?? '';

  /** Runs a tool; user errors become tool errors the model can read (`isError`), never protocol failures. */
  async function run(work: () => Promise<unknown>): Promise<CallToolResult> {
    try {
      return text(await work());
    } catch (error) {
      if (isCodedError(error)) {
        if (error.status >= 500 && error.code !== 'llm_not_configured') options.onInternalError?.(error);
        const status = error.status > 0 ? ` (${error.status})` : '';
        return { isError: true, content: [{ type: 'text', text: `Error ${error.code}${status}: ${error.detail}` }] };
      }
      options.onInternalError?.(error);
      return {
        isError: true,
        content: [{ type: 'text', text: 'Error: the memory service failed unexpectedly; try again later.' }],
      };
    }
  }

  server.registerTool(
    'retain',
    {
      title: 'Remember',
      description:
        'Store a memory in the bank: one durable fact, preference, decision or event, written as a self-contained sentence (e.g. "Alice prefers green tea over coffee."). It is recallable as soon as this returns; storing identical text twice keeps one copy. Answers the new memory ids.',
      inputSchema: input({
        content: z.string().min(1).max(100_000).describe('The text to remember.'),
        space: Space,
        context: z
          .string()
          .max(2000)
          .optional()
          .describe('Optional context: where this came from (e.g. "support chat").'),
        timestamp: z
          .string()
          .optional()
          .describe('Optional ISO 8601 date or date-time when it happened (defaults to now).'),
        tags: z.array(z.string().max(256)).max(100).optional().describe('Optional tags to filter recall by.'),
        metadata: z
          .record(z.string().max(256), z.json())
          .optional()
          .describe(
            'Optional metadata: any JSON under string keys (e.g. {"project": "apollo", "priority": 2}), for filters such as {"metadata.priority": {"gte": 2}}.',
          ),
        supersedes: z
          .array(z.uuid())
          .max(100)
          .optional()
          .describe(
            'Ids of memories this one replaces (e.g. an old address): they stop being current from its timestamp.',
          ),
        expires_at: z
          .string()
          .max(64)
          .optional()
          .describe(
            "Optional RFC 3339 date-time (or date) when it is forgotten, e.g. a one-off code or a temporary plan; the bank's retention applies when omitted.",
          ),
      }),
      annotations: {
        title: 'Remember',
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    (args) => run(() => backend.retain(bankOf(args), args)),
  );

  server.registerTool(
    'recall',
    {
      title: 'Recall memories',
      description:
        'Search the bank for memories relevant to a question (semantic, keyword and time-aware search). Answers the best matches first, each with its text, id, type, date, score and relevance (the chance, 0 to 1, that it answers the question). Use it before answering anything that depends on what was learned earlier.',
      inputSchema: input({
        query: z.string().min(1).max(10_000).describe('A question or keywords, e.g. "What does Alice drink?".'),
        space: Space,
        max_tokens: z
          .number()
          .int()
          .min(1)
          .max(100_000)
          .optional()
          .describe('Cap on the total size of the results in tokens (default 4096).'),
        budget: Budget.describe('How hard to search: low, mid (default) or high.'),
        types: z
          .array(z.enum(MEMORY_TYPES))
          .optional()
          .describe(
            'Only these memory types (raw, world, experience, opinion, observation, procedure, preference, correction).',
          ),
        tags: z.array(z.string()).optional().describe('Only memories with any of these tags (or untagged ones).'),
        filter: Filter,
        include_org: z.boolean().optional().describe("Also search the space's shared organization memory."),
        min_relevance: z
          .number()
          .min(0)
          .max(1)
          .optional()
          .describe('Leave out results whose relevance is below this (0 to 1; 0.2 keeps what likely answers).'),
        ...Validity,
      }),
      annotations: {
        title: 'Recall memories',
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    (args) =>
      run(async () => {
        const answer = await backend.recall(bankOf(args), args);
        return { results: compactHits(answer.results) };
      }),
  );

  server.registerTool(
    'reflect',
    {
      title: 'Answer from memory',
      description:
        "Ask a question and get an answer synthesised by the memory service's LLM from the bank's memories only, with the ids of the memories it cites; it says so when memory does not hold the answer. Needs an engine with an LLM configured (otherwise use recall).",
      inputSchema: input({
        query: z.string().min(1).max(10_000).describe('The question to answer from memory.'),
        space: Space,
        budget: Budget.describe('How many memories to consider: low (default), mid or high.'),
        ...Validity,
      }),
      annotations: {
        title: 'Answer from memory',
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    (args) => run(() => backend.reflect(bankOf(args), args)),
  );

  server.registerTool(
    'list_memories',
    {
      title: 'List memories',
      description:
        'List the memories stored in the bank, newest first, with optional filters and pagination (answers items and the total). Use recall to search by meaning; use this to browse or to find the id of a memory to delete.',
      inputSchema: input({
        space: Space,
        type: z.enum(MEMORY_TYPES).optional().describe('Only memories of this type.'),
        q: z.string().max(2000).optional().describe('Only memories whose text contains these words.'),
        filter: Filter,
        limit: z.number().int().min(1).max(200).optional().describe('Page size (default 20).'),
        offset: z.number().int().min(0).optional().describe('How many to skip (default 0).'),
        cursor: z
          .string()
          .max(2048)
          .optional()
          .describe("The previous answer's next_cursor, to get the page after it (instead of offset)."),
        ...Validity,
      }),
      annotations: {
        title: 'List memories',
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    (args) => run(() => backend.listMemories(bankOf(args), args)),
  );

  server.registerTool(
    'delete_memory',
    {
      title: 'Delete a memory',
      description:
        'Permanently delete one memory (and the facts derived from it) by its id. This cannot be undone: only do it when the user asks to forget something or a memory is wrong.',
      inputSchema: input({
        memory_id: z.uuid().describe('The id of the memory (from recall or list_memories).'),
      }),
      annotations: {
        title: 'Delete a memory',
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    (args) => run(() => backend.deleteMemory(bankOf(args), args.memory_id)),
  );

  server.registerTool(
    'delete_memories',
    {
      title: 'Delete memories by filter',
      description:
        'Permanently delete every memory of the bank a filter passes (and the facts derived from them), in one step. Call it first with dry_run: true to learn how many it would delete, and only delete when the user asks to forget them. This cannot be undone.',
      inputSchema: input({
        filter: Filter.unwrap().describe('Which memories: the filter expression of list_memories (required).'),
        space: Space,
        dry_run: z.boolean().optional().describe('true: count what would be deleted, delete nothing.'),
      }),
      annotations: {
        title: 'Delete memories by filter',
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    (args) => run(() => backend.deleteMatching(bankOf(args), args)),
  );

  server.registerTool(
    'entity',
    {
      title: 'Entities',
      description:
        "What memory knows about a person, place or thing: with `name`, its current facts and a timeline of how they changed (when each became true, and which replaced which); without it, the names the bank's memories mention, with how many memories name each and when (filter by `prefix`, page with `cursor`).",
      inputSchema: input({
        name: z.string().min(1).max(200).optional().describe('The entity to look up (any case), e.g. "Alice".'),
        prefix: z.string().min(1).max(200).optional().describe('When listing: only names starting with this.'),
        space: Space,
        limit: z
          .number()
          .int()
          .min(1)
          .max(200)
          .optional()
          .describe('With name: memories read (default 20); else page size (default 50).'),
        cursor: z
          .string()
          .max(2048)
          .optional()
          .describe("When listing: the previous answer's next_cursor, to get the page after it."),
      }),
      annotations: {
        title: 'Entities',
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    (args) => run(() => backend.entity(bankOf(args), args)),
  );

  server.registerTool(
    'list_banks',
    {
      title: 'List memory banks',
      description:
        'List the memory banks (one per subject), most recently written first, with their profiles and memory counts.',
      inputSchema: z.object({
        q: z.string().max(256).optional().describe('Only banks whose id or name contains this text.'),
        limit: z.number().int().min(1).max(200).optional().describe('Page size (default 50).'),
        offset: z.number().int().min(0).optional().describe('How many to skip (default 0).'),
        cursor: z
          .string()
          .max(2048)
          .optional()
          .describe("The previous answer's next_cursor, to get the page after it (instead of offset)."),
      }),
      annotations: {
        title: 'List memory banks',
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    (args) => run(() => backend.listBanks(args)),
  );

  return server;
}
