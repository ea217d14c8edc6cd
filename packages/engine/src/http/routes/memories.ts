import { invalidField } from '@mnemos/problems';
import type { Engine } from '../../engine.js';
import { DEFAULT_SPACE } from '../../memory/types.js';
import {
  deleteAnswer,
  memoriesAnswer,
  memoryAnswer,
  memoryPageAnswer,
  recallAnswer,
  retainAnswer,
  updateAnswer,
} from '../../wire/answers.js';
import {
  bodyFilter,
  checkText,
  maxNewMemories,
  memoryEdit,
  memorySelection,
  memorySet,
  parseTags,
  parseTimestamp,
  queryFilter,
  recallQuery,
  retainRequest,
  validityChoice,
} from '../../wire/input.js';
import {
  BankParams,
  BulkDeleteBody,
  BulkGetAnswer,
  BulkGetBody,
  BulkUpdateBody,
  ClearQuery,
  DeleteAnswer,
  MemoryAnswer,
  MemoryHistoryAnswer,
  MemoryListAnswer,
  MemoryListQuery,
  MemoryParams,
  MemoryPatchBody,
  RecallAnswer,
  RecallBody,
  RetainAnswer,
  RetainBody,
  UpdateAnswer,
} from '../../wire/schemas.js';
import type { TypedApp } from '../typed-app.js';
import { historyAnswer } from '../../wire/history-answer.js';
import { answers, plainJsonAnswers, retainHeaders } from '../responses.js';

const tags = ['memories'];

function date(value: string | undefined, pointer: string): Date | undefined {
  return parseTimestamp(value, pointer) ?? undefined;
}

type ListRequest = { params: { tenant: string; bank: string }; query: typeof MemoryListQuery.static };

export function registerMemoryRoutes(app: TypedApp, engine: Engine): void {
  const service = engine.service;
  app.post(
    '/v1/:tenant/banks/:bank/memories',
    {
      schema: {
        tags,
        operationId: 'retainMemories',
        summary: 'Retain memories (one or a batch)',
        description:
          'Stores content as memories, recallable as soon as the call returns. Identical content in the same ' +
          'bank and space is stored once (the existing id is returned).',
        params: BankParams,
        body: RetainBody,
        ...answers({ 200: RetainAnswer }, ['too_many_memories']),
      },
    },
    async (req, reply) => {
      const partition = { tenant: req.params.tenant, bankId: req.params.bank, space: req.body.space ?? DEFAULT_SPACE };
      const result = await service.retain(retainRequest(partition, req.body, maxNewMemories(req.headers)));
      reply.headers(retainHeaders(result));
      return retainAnswer(partition.bankId, result, req.body.messages?.length);
    },
  );

  app.post(
    '/v1/:tenant/banks/:bank/memories/recall',
    {
      ...plainJsonAnswers,
      schema: {
        tags,
        operationId: 'recallMemories',
        summary: 'Recall memories relevant to a query',
        params: BankParams,
        body: RecallBody,
        ...answers({ 200: RecallAnswer }),
      },
    },
    async (req) => recallAnswer(await service.recall(recallQuery(req.params.tenant, req.params.bank, req.body))),
  );

  const list = async ({ params, query: q }: ListRequest) =>
    memoryPageAnswer(
      await service.listMemories({
        tenant: params.tenant,
        bankId: params.bank,
        space: q.space,
        type: q.type,
        text: q.q === undefined ? undefined : checkText(q.q, '/query/q'),
        tags: parseTags(q.tags, '/query/tags'),
        since: date(q.since, '/query/since'),
        until: date(q.until, '/query/until'),
        documentId: q.document_id,
        state: q.state,
        filter: queryFilter(q.filter),
        limit: q.limit ?? 100,
        offset: q.offset ?? 0,
        cursor: q.cursor,
        ...validityChoice(q, '/query/'),
      }),
    );
  const listSchema = { tags, params: BankParams, querystring: MemoryListQuery, ...answers({ 200: MemoryListAnswer }) };
  app.get(
    '/v1/:tenant/banks/:bank/memories',
    {
      schema: { ...listSchema, operationId: 'listMemories', summary: 'List memories with filters and pagination' },
    },
    list,
  );
  app.get(
    '/v1/:tenant/banks/:bank/memories/list',
    {
      schema: { ...listSchema, operationId: 'listMemoriesHindsight', summary: 'List memories (Hindsight path)' },
    },
    list,
  );

  app.get(
    '/v1/:tenant/banks/:bank/memories/:id',
    {
      schema: {
        tags,
        operationId: 'getMemory',
        summary: 'Get one memory',
        params: MemoryParams,
        ...answers({ 200: MemoryAnswer }, ['memory_not_found']),
      },
    },
    async (req) => memoryAnswer(await service.getMemory(req.params.tenant, req.params.bank, req.params.id)),
  );

  app.get(
    '/v1/:tenant/banks/:bank/memories/:id/history',
    {
      schema: {
        tags,
        operationId: 'getMemoryHistory',
        summary: "A memory's versions, oldest first",
        description:
          'Every change to a memory (create, update, invalidate, restore, supersede, expire, delete) appends a ' +
          "version while its bank's history setting is on. A deleted memory keeps only a tombstone version: the " +
          'text and metadata of all its versions are forgotten.',
        params: MemoryParams,
        ...answers({ 200: MemoryHistoryAnswer }, ['memory_not_found']),
      },
    },
    async (req) => historyAnswer(await service.memoryHistory(req.params.tenant, req.params.bank, req.params.id)),
  );

  app.patch(
    '/v1/:tenant/banks/:bank/memories/:id',
    {
      schema: {
        tags,
        operationId: 'updateMemory',
        summary: 'Edit a memory, invalidate it with {state: "invalidated"}, or set its validity (valid_from, valid_to)',
        params: MemoryParams,
        body: MemoryPatchBody,
        ...answers({ 200: MemoryAnswer }, ['memory_not_found', 'duplicate_memory']),
      },
    },
    async (req) => {
      const { tenant, bank, id } = req.params;
      return memoryAnswer(await service.editMemory(tenant, bank, id, memoryEdit(req.body)));
    },
  );

  app.delete(
    '/v1/:tenant/banks/:bank/memories/:id',
    {
      schema: {
        tags,
        operationId: 'deleteMemory',
        summary: 'Hard-delete a memory and the facts derived from it',
        params: MemoryParams,
        ...answers({ 200: DeleteAnswer }, ['memory_not_found']),
      },
    },
    async (req) => deleteAnswer(await service.deleteMemory(req.params.tenant, req.params.bank, req.params.id)),
  );

  app.post(
    '/v1/:tenant/banks/:bank/memories/delete',
    {
      schema: {
        tags,
        operationId: 'deleteMatchingMemories',
        summary: 'Delete the memories a filter passes (dry_run: count them)',
        params: BankParams,
        body: BulkDeleteBody,
        ...answers({ 200: DeleteAnswer }),
      },
    },
    async (req) => {
      const filter = bodyFilter(req.body.filter);
      if (filter === undefined) throw invalidField('/filter', 'is required: the filter of the memories to delete');
      const partition = { tenant: req.params.tenant, bankId: req.params.bank, space: req.body.space ?? undefined };
      const count = await service.deleteMatching(partition, filter, req.body.dry_run === true);
      return deleteAnswer(count);
    },
  );

  app.post(
    '/v1/:tenant/banks/:bank/memories/update',
    {
      schema: {
        tags,
        operationId: 'updateMatchingMemories',
        summary: 'Set metadata, tags or state on the memories a filter passes or ids name, in one transaction',
        params: BankParams,
        body: BulkUpdateBody,
        ...answers({ 200: UpdateAnswer }),
      },
    },
    async (req) => {
      const which = memorySelection(req.body);
      const set = memorySet(req.body.set);
      const selection = { tenant: req.params.tenant, bankId: req.params.bank, space: req.body.space ?? undefined };
      return updateAnswer(await service.updateMemories(selection, which, set));
    },
  );

  app.post(
    '/v1/:tenant/banks/:bank/memories/get',
    {
      schema: {
        tags,
        operationId: 'getMemories',
        summary: 'Get several memories by id, in the order asked (an id without a memory is marked, not an error)',
        params: BankParams,
        body: BulkGetBody,
        ...answers({ 200: BulkGetAnswer }),
      },
    },
    async (req) => {
      const selection = { tenant: req.params.tenant, bankId: req.params.bank, space: req.body.space ?? undefined };
      return memoriesAnswer(req.body.ids, await service.getMemories(selection, req.body.ids));
    },
  );

  app.delete(
    '/v1/:tenant/banks/:bank/memories',
    {
      schema: {
        tags,
        operationId: 'clearMemories',
        summary: 'Erase the memories of a bank (optionally one space or type)',
        params: BankParams,
        querystring: ClearQuery,
        ...answers({ 200: DeleteAnswer }),
      },
    },
    async (req) => {
      const { tenant, bank } = req.params;
      return deleteAnswer(await service.clearMemories(tenant, bank, req.query.space, req.query.type));
    },
  );
}
