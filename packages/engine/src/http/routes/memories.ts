import { clearMemories, deleteMemory, type MemoryPatch } from '../../memory/store.js';
import { DEFAULT_SPACE } from '../../memory/types.js';
import type { Engine } from '../../engine.js';
import { sha256Hex } from '../../util/hash.js';
import { countTokensYielding } from '../../util/tokens.js';
import { embeddingText } from '../../memory/embedding-text.js';
import type { TypedApp } from '../app.js';
import { checkText, parseTags, parseTimestamp } from '../normalize.js';
import { Problem } from '../problem.js';
import {
  BankParams, ClearQuery, DeleteAnswer, MemoryAnswer, MemoryListAnswer, MemoryListQuery, MemoryParams, MemoryPatchBody,
  RecallAnswer, RecallBody, RetainAnswer, RetainBody,
} from '../schemas.js';
import { maxNewMemories, memoryAnswer, plainJsonAnswers, recallOperation, retainOperation } from '../service.js';

const problem = { $ref: 'Problem#' };
const errors = { 400: problem, 401: problem, 404: problem, 413: problem };

const memoryNotFound = (id: string) =>
  new Problem(404, 'memory_not_found', `Memory ${id} does not exist in this bank (it may have been deleted).`);

function date(value: string | undefined, pointer: string): Date | undefined {
  return parseTimestamp(value, pointer) ?? undefined;
}

export function registerMemoryRoutes(app: TypedApp, engine: Engine): void {
  app.post('/v1/:tenant/banks/:bank/memories', {
    schema: {
      tags: ['memories'], operationId: 'retainMemories', summary: 'Retain memories (one or a batch)',
      description: 'Stores content as memories, recallable as soon as the call returns. Identical content in the same bank and space is stored once (the existing id is returned).',
      params: BankParams, body: RetainBody, response: { 200: RetainAnswer, ...errors },
    },
  }, async (req) => {
    const space = req.body.space ?? DEFAULT_SPACE;
    const partition = { tenant: req.params.tenant, bankId: req.params.bank, space };
    return retainOperation(engine, partition, req.body, maxNewMemories(req.headers));
  });

  app.post('/v1/:tenant/banks/:bank/memories/recall', {
    ...plainJsonAnswers,
    schema: {
      tags: ['memories'], operationId: 'recallMemories', summary: 'Recall memories relevant to a query',
      params: BankParams, body: RecallBody, response: { 200: RecallAnswer, ...errors },
    },
  }, async (req) => recallOperation(engine, req.params.tenant, req.params.bank, req.body));

  const list = async (req: { params: { tenant: string; bank: string }; query: typeof MemoryListQuery.static }) => {
    const q = req.query;
    const limit = q.limit ?? 100;
    const offset = q.offset ?? 0;
    const { items, total } = await engine.store.list({
      tenant: req.params.tenant,
      bankId: req.params.bank,
      space: q.space,
      type: q.type,
      q: q.q === undefined ? undefined : checkText(q.q, '/query/q'),
      tags: parseTags(q.tags, '/query/tags'),
      since: date(q.since, '/query/since'),
      until: date(q.until, '/query/until'),
      documentId: q.document_id,
      state: q.state,
      limit,
      offset,
    });
    return { items: items.map(memoryAnswer), total, limit, offset };
  };
  const listSchema = { tags: ['memories'], params: BankParams, querystring: MemoryListQuery, response: { 200: MemoryListAnswer, ...errors } };
  app.get('/v1/:tenant/banks/:bank/memories', { schema: { ...listSchema, operationId: 'listMemories', summary: 'List memories with filters and pagination' } }, list);
  app.get('/v1/:tenant/banks/:bank/memories/list', { schema: { ...listSchema, operationId: 'listMemoriesHindsight', summary: 'List memories (Hindsight path)' } }, list);

  app.get('/v1/:tenant/banks/:bank/memories/:id', {
    schema: { tags: ['memories'], operationId: 'getMemory', summary: 'Get one memory', params: MemoryParams, response: { 200: MemoryAnswer, ...errors } },
  }, async (req) => {
    const memory = await engine.store.get(req.params.tenant, req.params.bank, req.params.id);
    if (!memory) throw memoryNotFound(req.params.id);
    return memoryAnswer(memory);
  });

  app.patch('/v1/:tenant/banks/:bank/memories/:id', {
    schema: {
      tags: ['memories'], operationId: 'updateMemory', summary: 'Edit a memory, or invalidate it with {state: "invalidated"}',
      params: MemoryParams, body: MemoryPatchBody, response: { 200: MemoryAnswer, ...errors },
    },
  }, async (req) => {
    const b = req.body;
    const patch: MemoryPatch = {};
    if (b.text !== undefined) {
      const text = checkText(b.text, '/text');
      if (text.trim() === '') throw new Problem(400, 'validation_failed', 'text must not be empty.', [{ pointer: '/text', detail: 'must not be empty' }]);
      const [[vector], [tokenCount]] = await Promise.all([
        engine.embedder.embed([embeddingText({ text })], 'document'),
        countTokensYielding([text]),
      ]);
      Object.assign(patch, { text, embedding: vector!, tokenCount: tokenCount!, contentHash: sha256Hex(text) });
    }
    if (b.context !== undefined) patch.context = b.context === null ? null : checkText(b.context, '/context');
    const tags = parseTags(b.tags, '/tags');
    if (tags !== undefined) patch.tags = tags;
    if (b.metadata !== undefined && b.metadata !== null) {
      for (const [k, v] of Object.entries(b.metadata)) checkText(k + v, `/metadata/${k}`);
      patch.metadata = b.metadata;
    }
    if (b.state !== undefined) patch.state = b.state;
    if (b.occurred_at !== undefined) patch.occurredAt = parseTimestamp(b.occurred_at, '/occurred_at') ?? null;
    if (Object.keys(patch).length === 0) {
      throw new Problem(400, 'validation_failed', 'Nothing to change: send at least one of text, context, tags, metadata, state, occurred_at.');
    }
    let memory;
    try {
      memory = await engine.store.update(req.params.tenant, req.params.bank, req.params.id, patch);
    } catch (error) {
      if ((error as { code?: string }).code === '23505') {
        throw new Problem(409, 'duplicate_memory', 'Another memory in this bank and space already has exactly this text.');
      }
      throw error;
    }
    if (!memory) throw memoryNotFound(req.params.id);
    return memoryAnswer(memory);
  });

  app.delete('/v1/:tenant/banks/:bank/memories/:id', {
    schema: {
      tags: ['memories'], operationId: 'deleteMemory', summary: 'Hard-delete a memory and the facts derived from it',
      params: MemoryParams, response: { 200: DeleteAnswer, ...errors },
    },
  }, async (req) => {
    const count = await deleteMemory(engine.db, req.params.tenant, req.params.bank, req.params.id);
    if (count === 0) throw memoryNotFound(req.params.id);
    return { success: true, deleted_count: count };
  });

  app.delete('/v1/:tenant/banks/:bank/memories', {
    schema: {
      tags: ['memories'], operationId: 'clearMemories', summary: 'Erase the memories of a bank (optionally one space or type)',
      params: BankParams, querystring: ClearQuery, response: { 200: DeleteAnswer, ...errors },
    },
  }, async (req) => {
    const count = await clearMemories(engine.db, req.params.tenant, req.params.bank, req.query.space, req.query.type);
    return { success: true, deleted_count: count };
  });
}

