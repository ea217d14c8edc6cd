import type { Filter, Mnemos } from '@mnemos/client';
import type { MemoryBackend } from './backend.js';

/** The MCP tools over HTTP: an engine or a gateway reached with @mnemos/client (used by `mnemos mcp`). */
export function httpBackend(client: Mnemos): MemoryBackend {
  return {
    retain: (bankId, args) => client.retain(bankId, args.content, args),
    recall: (bankId, { filter, ...args }) => client.recall(bankId, args.query, { ...args, filter: asFilter(filter) }),
    reflect: (bankId, args) => client.reflect(bankId, args.query, args),
    listMemories: (bankId, { filter, ...args }) =>
      client.listMemories(bankId, {
        ...args,
        filter: asFilter(filter),
        limit: args.limit ?? 20,
      }),
    deleteMemory: (bankId, memoryId) => client.deleteMemory(bankId, memoryId),
    deleteMatching: (bankId, { filter, ...args }) => client.deleteMatching(bankId, filter as Filter, args),
    listBanks: (args) => client.listBanks({ ...args, limit: args.limit ?? 50 }),
    entity: (bankId, { name, prefix, cursor, ...args }) =>
      name === undefined
        ? client.listEntities(bankId, { ...args, prefix, cursor, limit: args.limit ?? 50 })
        : client.getEntity(bankId, name, { ...args, limit: args.limit ?? 20 }),
  };
}

/** A tool's filter argument, an object the server reads and checks as the filter expression it is. */
const asFilter = (filter: Record<string, unknown> | undefined): Filter | undefined => filter as Filter | undefined;
