import { invalidField, Problem, problem } from '@mnemos/problems';
import { DEFAULT_SPACE, type Metadata } from '../memory/types.js';
import type { MemoryService } from '../service/memory-service.js';
import type { RetainRequest, RetainResult } from '../service/types.js';
import {
  bankPageAnswer,
  deleteAnswer,
  memoryPageAnswer,
  recallAnswer,
  reflectAnswer,
  retainAnswer,
} from '../wire/answers.js';
import { entityAnswer, entityPageAnswer } from '../wire/entity-answers.js';
import { bodyFilter, checkText, recallQuery, reflectRequest, retainRequest, validityChoice } from '../wire/input.js';

export type RetainArgs = {
  content: string;
  space?: string | undefined;
  context?: string | undefined;
  timestamp?: string | undefined;
  tags?: string[] | undefined;
  metadata?: Metadata | undefined;
  supersedes?: string[] | undefined;
  expires_at?: string | undefined;
};

/** Which memories a read answers by their validity (current ones by default). */
type ValidityArgs = { as_of?: string | undefined; include_superseded?: boolean | undefined };

export type RecallArgs = {
  query: string;
  space?: string | undefined;
  max_tokens?: number | undefined;
  budget?: 'low' | 'mid' | 'high' | undefined;
  types?: string[] | undefined;
  tags?: string[] | undefined;
  filter?: Record<string, unknown> | undefined;
  include_org?: boolean | undefined;
  min_relevance?: number | undefined;
} & ValidityArgs;

export type ReflectArgs = {
  query: string;
  space?: string | undefined;
  budget?: 'low' | 'mid' | 'high' | undefined;
} & ValidityArgs;

export type ListMemoriesArgs = {
  space?: string | undefined;
  type?: string | undefined;
  q?: string | undefined;
  filter?: Record<string, unknown> | undefined;
  limit?: number | undefined;
  offset?: number | undefined;
  cursor?: string | undefined;
} & ValidityArgs;

export type EntityArgs = {
  /** One entity by name; without it the bank's entities are listed. */
  name?: string | undefined;
  prefix?: string | undefined;
  space?: string | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
};

export type ListBanksArgs = {
  q?: string | undefined;
  limit?: number | undefined;
  offset?: number | undefined;
  cursor?: string | undefined;
};

export type DeleteMatchingArgs = { filter: unknown; space?: string | undefined; dry_run?: boolean | undefined };

/**
 * What the MCP tools need, answering the wire shapes of the HTTP API. Two implementations: in-process on an engine
 * (POST /mcp) and over HTTP with @mnemos/client (`mnemos mcp`, stdio). Failures throw an error carrying
 * `status`, `code` and `detail` (the engine's Problem or the client's MnemosError).
 */
export interface MemoryBackend {
  retain(bankId: string, args: RetainArgs): Promise<object>;
  recall(bankId: string, args: RecallArgs): Promise<{ results: object[] }>;
  reflect(bankId: string, args: ReflectArgs): Promise<object>;
  listMemories(bankId: string, args: ListMemoriesArgs): Promise<object>;
  deleteMemory(bankId: string, memoryId: string): Promise<object>;
  deleteMatching(bankId: string, args: DeleteMatchingArgs): Promise<object>;
  listBanks(args: ListBanksArgs): Promise<object>;
  /** An entity (its facts and timeline) when `name` is given, else a page of the bank's entities. */
  entity(bankId: string, args: EntityArgs): Promise<object>;
}

/**
 * Runs retains under one bound of new memories shared by all of them (a quota-holding gateway's bound on one MCP
 * request, which may call retain several times): one after another, each may store what the ones before left.
 */
function sharedRetainBound(
  service: MemoryService,
  maxNew: number | undefined,
): (request: RetainRequest) => Promise<RetainResult> {
  if (maxNew === undefined) return (request) => service.retain(request);
  let left = maxNew;
  let queue: Promise<unknown> = Promise.resolve();
  return (request) => {
    const next = queue.then(async () => {
      const result = await service.retain({ ...request, maxNewMemories: left });
      if (!result.async) left -= result.storedCount;
      return result;
    });
    queue = next.catch(() => undefined);
    return next;
  };
}

/**
 * The memory service's operations for one tenant, called in-process, answering the HTTP API's shapes. `maxNewMemories`
 * bounds the new memories all retains through this backend store together.
 */
export function engineBackend(
  service: MemoryService,
  tenant: string,
  options: { maxNewMemories?: number | undefined } = {},
): MemoryBackend {
  const retain = sharedRetainBound(service, options.maxNewMemories);
  return {
    async retain(bankId, args) {
      const partition = { tenant, bankId, space: args.space ?? DEFAULT_SPACE };
      return retainAnswer(bankId, await retain(retainRequest(partition, { ...args })));
    },
    async recall(bankId, args) {
      return recallAnswer(await service.recall(recallQuery(tenant, bankId, { ...args })));
    },
    async reflect(bankId, args) {
      return reflectAnswer(await service.reflect(reflectRequest(tenant, bankId, { ...args })));
    },
    async listMemories(bankId, args) {
      return memoryPageAnswer(
        await service.listMemories({
          tenant,
          bankId,
          space: args.space,
          type: args.type,
          text: args.q === undefined ? undefined : checkText(args.q, '/q'),
          tags: undefined,
          since: undefined,
          until: undefined,
          documentId: undefined,
          state: undefined,
          filter: bodyFilter(args.filter),
          limit: args.limit ?? 20,
          offset: args.offset ?? 0,
          cursor: args.cursor,
          ...validityChoice(args, '/'),
        }),
      );
    },
    async deleteMemory(bankId, memoryId) {
      try {
        return deleteAnswer(await service.deleteMemory(tenant, bankId, memoryId));
      } catch (error) {
        // A model reads the answer without the URL, so the bank is named.
        if (error instanceof Problem && error.code === 'memory_not_found') {
          throw problem('memory_not_found', 'inNamedBank', { id: memoryId, bankId });
        }
        throw error;
      }
    },
    async deleteMatching(bankId, args) {
      const filter = bodyFilter(args.filter);
      if (filter === undefined) throw invalidField('/filter', 'is required: the filter of the memories to delete');
      const selection = { tenant, bankId, space: args.space };
      return deleteAnswer(await service.deleteMatching(selection, filter, args.dry_run === true));
    },
    async listBanks(args) {
      const page = { limit: args.limit ?? 50, offset: args.offset ?? 0, cursor: args.cursor };
      return bankPageAnswer(await service.listBanks(tenant, args.q, page));
    },
    async entity(bankId, args) {
      const { name, prefix, space, cursor } = args;
      if (name !== undefined) {
        const query = { tenant, bankId, space, name: checkText(name, '/name'), limit: args.limit ?? 20 };
        return entityAnswer(await service.entity(query));
      }
      const checked = prefix === undefined ? undefined : checkText(prefix, '/prefix');
      const list = { tenant, bankId, space, prefix: checked, limit: args.limit ?? 50, cursor };
      return entityPageAnswer(await service.listEntities(list));
    },
  };
}
