import { listBanks } from '../banks/store.js';
import type { Engine } from '../engine.js';
import { checkText } from '../http/normalize.js';
import { Problem } from '../http/problem.js';
import type { ReflectBodyT } from '../http/routes/reflect.js';
import type { RecallBodyT, RetainBodyT } from '../http/schemas.js';
import { memoryAnswer, recallOperation, retainOperation } from '../http/service.js';
import { deleteMemory } from '../memory/store.js';
import { DEFAULT_SPACE } from '../memory/types.js';

export type RetainArgs = {
  content: string;
  space?: string | undefined;
  context?: string | undefined;
  timestamp?: string | undefined;
  tags?: string[] | undefined;
  metadata?: Record<string, string> | undefined;
};

export type RecallArgs = {
  query: string;
  space?: string | undefined;
  max_tokens?: number | undefined;
  budget?: 'low' | 'mid' | 'high' | undefined;
  types?: string[] | undefined;
  tags?: string[] | undefined;
  include_org?: boolean | undefined;
};

export type ReflectArgs = {
  query: string;
  space?: string | undefined;
  budget?: 'low' | 'mid' | 'high' | undefined;
};

export type ListMemoriesArgs = {
  space?: string | undefined;
  type?: string | undefined;
  q?: string | undefined;
  limit?: number | undefined;
  offset?: number | undefined;
};

export type ListBanksArgs = {
  q?: string | undefined;
  limit?: number | undefined;
  offset?: number | undefined;
};

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
  listBanks(args: ListBanksArgs): Promise<object>;
}

/** The engine's own operations for one tenant, called in-process. */
export function engineBackend(engine: Engine, tenant: string): MemoryBackend {
  return {
    async retain(bankId, args) {
      const body: RetainBodyT = { ...args };
      return retainOperation(engine, { tenant, bankId, space: args.space ?? DEFAULT_SPACE }, body);
    },
    async recall(bankId, args) {
      const body: RecallBodyT = { ...args };
      return recallOperation(engine, tenant, bankId, body);
    },
    async reflect(bankId, args) {
      if (!engine.reflector) {
        throw new Problem(
          503,
          'llm_not_configured',
          'Reflect needs an LLM and this engine has none (set MNEMOS_API_LLM_PROVIDER and MNEMOS_API_LLM_MODEL); use the recall tool instead.',
        );
      }
      const body: ReflectBodyT = { ...args };
      return engine.reflector(tenant, bankId, body);
    },
    async listMemories(bankId, args) {
      const limit = args.limit ?? 20;
      const offset = args.offset ?? 0;
      const { items, total } = await engine.store.list({
        tenant,
        bankId,
        space: args.space,
        type: args.type,
        q: args.q === undefined ? undefined : checkText(args.q, '/q'),
        tags: undefined,
        since: undefined,
        until: undefined,
        documentId: undefined,
        state: undefined,
        limit,
        offset,
      });
      return { items: items.map(memoryAnswer), total, limit, offset };
    },
    async deleteMemory(bankId, memoryId) {
      const count = await deleteMemory(engine.db, tenant, bankId, memoryId);
      if (count === 0) {
        throw new Problem(404, 'memory_not_found', `Memory ${memoryId} does not exist in bank "${bankId}" (it may have been deleted).`);
      }
      return { success: true, deleted_count: count };
    },
    async listBanks(args) {
      const limit = args.limit ?? 50;
      const offset = args.offset ?? 0;
      const { banks, total } = await listBanks(engine.db, tenant, args.q, limit, offset);
      return { banks, total, limit, offset };
    },
  };
}
