import { invalidField, problem } from '@mnemos/problems';
import {
  bankStats,
  deleteBank,
  getBank,
  listBanks,
  patchBank,
  putBank,
  type Bank,
  type BankChanges,
  type BankStats,
} from '../memory/bank-store.js';
import type { Operation } from '../jobs/operations.js';
import { BANK_CURSOR, loadCursorSeal, MEMORY_CURSOR, type CursorScope, type CursorSeal } from './cursor.js';
import type { EngineMetrics } from '../metrics.js';
import {
  entityDetail,
  entityPage,
  type EntityDetail,
  type EntityListQuery,
  type EntityPage,
  type EntityQuery,
} from './entities.js';
import { MAX_CHUNK_CHARS, MAX_CHUNK_TOKENS } from '../memory/chunk.js';
import { embeddingText } from '../memory/embedding-text.js';
import {
  pieceCount,
  retain,
  RetainLimitExceeded,
  type AfterRetainHook,
  type RetainDependencies,
  type RetainItem,
  withRetention,
} from '../memory/retain.js';
import { clearMemories, deleteMemory, deleteWhere, type BankSelection, type MemoryPatch } from '../memory/store.js';
import { MEMORY_TYPES, type Partition } from '../memory/types.js';
import { unknownMemories } from '../memory/supersede.js';
import { readHistory } from '../memory/history-store.js';
import { importRecords, type ImportOutcome, type ImportRecord } from '../memory/import.js';
import { exportPage, type ExportKey } from '../memory/transfer-store.js';
import type { ExportedMemory } from '../memory/types.js';
import type { Queryable } from '../db/database.js';
import { fieldsOf, type Filter } from '../filters/ast.js';
import { recall, type RecallDependencies } from '../recall/pipeline.js';
import { expiredAt, validityOf } from '../filters/validity.js';
import { systemClock, type Clock } from '../util/clock.js';
import { sha256Hex } from '../util/hash.js';
import { countTokens } from '../util/tokens.js';
import type {
  Budget,
  Memory,
  MemoryEdit,
  MemoryListQuery,
  MemorySelection,
  MemorySet,
  MemoryVersion,
  Page,
  PageRequest,
  RecallQuery,
  RecallResult,
  ReflectRequest,
  ReflectResult,
  ReflectStream,
  RetainRequest,
  RetainResult,
} from './types.js';

/** Rows an export reads from the database at a time. */
const EXPORT_PAGE_ROWS = 500;

/** Candidates per retrieval arm for each named budget. */
export const BUDGETS = { low: 40, mid: 100, high: 300 } as const;

export const candidatesFor = (budget: Budget): number => (typeof budget === 'number' ? budget : BUDGETS[budget]);

/** What the optional features add to the service; each is absent when its feature is not installed. */
export interface ServiceFeatures {
  /** Stores the items as a durable job; answers its operation id. */
  retainLater?: ((partition: Partition, items: readonly RetainItem[]) => Promise<string>) | undefined;
  /** Answers a question from memory through the LLM (streamed to `stream` when given). */
  reflect?: ((request: ReflectRequest, stream?: ReflectStream) => Promise<ReflectResult>) | undefined;
  /** An operation's status, or undefined when unknown. */
  operationStatus?: ((tenant: string, id: string) => Promise<Operation | undefined>) | undefined;
}

/** The engine's parts the service works with: what retain and recall need, passed to them as they are. */
export interface ServiceParts extends RetainDependencies, RecallDependencies {
  metrics: EngineMetrics;
  /** What "now" is for expiry and retention (util/clock.ts); the system clock when absent. */
  clock?: Clock | undefined;
  /** Runs in each retain's transaction after its rows are written. */
  afterRetain: AfterRetainHook;
}

const retainLimitProblem = (wouldStore: number, allowed: number) =>
  problem(
    'too_many_memories',
    'overBound',
    { wouldStore, allowed },
    {
      headers: { 'x-mnemos-would-store': String(wouldStore) },
    },
  );

/** A cursor with an offset is a 400: one or the other says where a page starts. */
function checkOneStart(page: PageRequest): void {
  if (page.cursor !== undefined && page.offset > 0) {
    throw invalidField(
      '/query/offset',
      'cannot be combined with cursor: a cursor already says where to start',
      'query',
    );
  }
}

/** A next page's cursor is given when this page is full, so there may be more. */
const pageIsFull = (page: PageRequest, count: number): boolean => page.limit > 0 && count >= page.limit;

/** The memories list a cursor is good for: the tenant, the bank and every filter (tags in any order). */
const memoryListScope = (q: MemoryListQuery): CursorScope => [
  'memories',
  q.tenant,
  q.bankId,
  q.space ?? null,
  q.type ?? null,
  q.text ?? null,
  q.tags === undefined ? null : JSON.stringify([...new Set(q.tags)].sort()),
  q.since?.toISOString() ?? null,
  q.until?.toISOString() ?? null,
  q.documentId ?? null,
  q.state ?? null,
  q.asOf?.toISOString() ?? null,
  q.includeSuperseded === true ? 'superseded' : null,
  q.filter === undefined ? null : JSON.stringify(q.filter),
];

const bankListScope = (tenant: string, text: string | undefined): CursorScope => ['banks', tenant, text ?? null];

/** A retain whose items supersede memories the partition does not hold is a 400 naming them; nothing is stored. */
async function refuseUnknownSupersedes(db: Queryable, p: Partition, items: readonly RetainItem[]): Promise<void> {
  const named = items.flatMap((item) => item.supersedes ?? []);
  if (named.length === 0) return;
  const unknown = new Set(await unknownMemories(db, p, named));
  if (unknown.size === 0) return;
  const errors = items.flatMap((item, i) => {
    const missing = [...new Set(item.supersedes ?? [])].filter((id) => unknown.has(id));
    const pointer = `${item.pointer ?? `/items/${i}`}/supersedes`;
    return missing.length === 0
      ? []
      : [{ pointer, detail: `names no memory of this bank and space: ${missing.join(', ')}` }];
  });
  const first = errors[0]!;
  throw problem(
    'validation_failed',
    'field',
    { where: 'body', pointer: first.pointer, issue: first.detail },
    { errors },
  );
}

const ENCRYPTED_METADATA_FILTER =
  'cannot name metadata: with encryption at rest metadata is sealed in the memory body; filter on tags, type, space, document_id or the times';

const hasExpired = (m: Memory, now: Date): boolean =>
  m.expiresAt !== null && expiredAt(Date.parse(m.expiresAt), now.getTime());

const memoryNotFound = (id: string) => problem('memory_not_found', 'inThisBank', { id });

/**
 * An edit's new text must stay one memory, as a retain of it would store it (one piece: within the chunk bounds in
 * characters and tokens); longer text is refused, to be retained instead. So an edit never stores more than a retain
 * counts, and its work stays bounded. Answers the text's token count.
 */
function oneMemoryText(text: string): number {
  if (text.trim() === '') {
    const errors = [{ pointer: '/text', detail: 'must not be empty' }];
    throw problem('validation_failed', 'emptyText', { errors });
  }
  const tokens = text.length > MAX_CHUNK_CHARS ? Infinity : countTokens(text);
  if (tokens > MAX_CHUNK_TOKENS) {
    const bounds = { maxChars: MAX_CHUNK_CHARS, maxTokens: MAX_CHUNK_TOKENS };
    const detail = `must fit one memory (${MAX_CHUNK_CHARS} characters, ${MAX_CHUNK_TOKENS} tokens); retain longer text`;
    throw problem('validation_failed', 'editTextTooLong', bounds, { errors: [{ pointer: '/text', detail }] });
  }
  return tokens;
}

/**
 * Every operation on memory, free of any transport: HTTP routes, MCP tools and the CLI translate their requests to
 * these calls and the answers back to their own shapes. Errors are catalogue problems.
 */
export class MemoryService {
  /** The cursor key, once the database has one (read on the first list that needs it). */
  private seal: CursorSeal | undefined;

  constructor(
    private readonly parts: ServiceParts,
    private readonly features: ServiceFeatures,
  ) {}

  /** `make`: a page gives a cursor, so the key is created if the database has none yet. */
  private async cursorSeal(make: boolean): Promise<CursorSeal> {
    if (this.seal !== undefined) return this.seal;
    const seal = await loadCursorSeal(this.parts.db, make);
    if (seal.keyed) this.seal = seal;
    return seal;
  }

  /** The instant a request is served at, by the engine's clock. */
  private now(): Date {
    return (this.parts.clock ?? systemClock)();
  }

  async retain(request: RetainRequest): Promise<RetainResult> {
    const { partition, maxNewMemories: maxNew } = request;
    await refuseUnknownSupersedes(this.parts.db, partition, request.items);
    const retainLater = request.async ? this.features.retainLater : undefined;
    const now = this.now();
    if (retainLater) {
      // The bank's retention counts from the call, not from when the job runs.
      const items = await withRetention(this.parts.db, partition, request.items, now);
      // The job stores at most the pieces counted here, so the bound holds for it too.
      const pieces = maxNew === undefined ? 0 : await pieceCount(items);
      if (maxNew !== undefined && pieces > maxNew) throw retainLimitProblem(pieces, maxNew);
      const operationId = await retainLater(partition, items);
      this.parts.metrics.operations.inc({ operation: 'retain' });
      return { async: true, itemsCount: items.length, operationId, mostNew: maxNew === undefined ? undefined : pieces };
    }
    let outcome;
    try {
      outcome = await retain(this.parts, partition, request.items, {
        afterRetain: this.parts.afterRetain,
        maxNew,
        now,
      });
    } catch (error) {
      if (error instanceof RetainLimitExceeded) throw retainLimitProblem(error.wouldStore, error.allowed);
      throw error;
    }
    this.parts.metrics.operations.inc({ operation: 'retain' });
    this.parts.metrics.memoriesRetained.inc(outcome.createdIds.length);
    return {
      async: false,
      itemsCount: request.items.length,
      memoryIds: outcome.memoryIds,
      storedCount: outcome.createdIds.length,
      operationId: outcome.operationId,
      items: outcome.items,
    };
  }

  async recall(q: RecallQuery): Promise<RecallResult> {
    if (!/[\p{L}\p{N}]/u.test(q.query)) {
      throw problem('validation_failed', 'queryWithoutWords', {
        errors: [{ pointer: '/query', detail: 'must contain at least one letter or digit' }],
      });
    }
    const unknownType = q.types?.find((t) => !(MEMORY_TYPES as readonly string[]).includes(t));
    if (unknownType !== undefined) {
      throw problem(
        'validation_failed',
        'unknownMemoryType',
        { type: unknownType, allowed: MEMORY_TYPES },
        {
          errors: [{ pointer: '/types', detail: `must be among ${MEMORY_TYPES.join(', ')}` }],
        },
      );
    }
    this.refuseEncryptedMetadata(q.filter, '/filter');
    const { budget, ...request } = q;
    const outcome = await recall(this.parts, { ...request, candidates: candidatesFor(budget), now: this.now() });
    this.parts.metrics.operations.inc({ operation: 'recall' });
    const trace = outcome.trace;
    return {
      hits: outcome.results,
      tokens: outcome.tokens,
      trace: trace ? { stages: trace.stages, totalMs: trace.total_ms } : undefined,
    };
  }

  /**
   * Needs the LLM feature; without it the answer is 503 llm_not_configured. With `stream`, the answer's text is handed
   * on as the LLM writes it; the result is the same.
   */
  async reflect(request: ReflectRequest, stream?: ReflectStream): Promise<ReflectResult> {
    if (!this.features.reflect) throw problem('llm_not_configured', 'noLlm');
    return this.features.reflect(request, stream);
  }

  async listMemories(q: MemoryListQuery): Promise<Page<Memory>> {
    checkOneStart(q);
    this.refuseEncryptedMetadata(q.filter, '/query/filter');
    const scope = memoryListScope(q);
    const after =
      q.cursor === undefined
        ? undefined
        : (await this.cursorSeal(false)).decode(MEMORY_CURSOR, q.cursor, scope, '/query/cursor');
    const { items, total, last } = await this.parts.store.list({
      tenant: q.tenant,
      bankId: q.bankId,
      space: q.space,
      type: q.type,
      q: q.text,
      tags: q.tags,
      since: q.since,
      until: q.until,
      documentId: q.documentId,
      state: q.state,
      filter: q.filter,
      limit: q.limit,
      offset: q.offset,
      after: after && { at: after.at, createdAt: after.createdAt, seq: after.seq, id: after.id },
      validity: validityOf({ ...q, now: this.now() }),
    });
    const next =
      last !== undefined && pageIsFull(q, items.length)
        ? (await this.cursorSeal(true)).encode(MEMORY_CURSOR, { list: 'memories', ...last }, scope)
        : null;
    return { items, total, limit: q.limit, offset: q.offset, nextCursor: next };
  }

  /** A memory; one that has expired is not found (the expiry job deletes it soon after). */
  async getMemory(tenant: string, bankId: string, id: string): Promise<Memory> {
    const memory = await this.parts.store.get(tenant, bankId, id);
    if (!memory || hasExpired(memory, this.now())) throw memoryNotFound(id);
    return memory;
  }

  /** Edits a memory; new text is embedded again. */
  async editMemory(tenant: string, bankId: string, id: string, edit: MemoryEdit): Promise<Memory> {
    const patch: MemoryPatch = { ...edit };
    if (edit.text !== undefined) {
      const text = edit.text;
      const tokenCount = oneMemoryText(text);
      const [vector] = await this.parts.embedder.embed([embeddingText({ text })], 'document');
      Object.assign(patch, { embedding: vector!, tokenCount, contentHash: sha256Hex(text) });
    }
    if (Object.keys(edit).length === 0) throw problem('validation_failed', 'nothingToChange');
    // An expired memory is gone to every read, so an edit cannot bring it back.
    let memory;
    try {
      memory = await this.parts.store.update(tenant, bankId, id, patch, this.now());
    } catch (error) {
      if ((error as { code?: string }).code === '23505') throw problem('duplicate_memory', 'sameText');
      throw error;
    }
    if (!memory) throw memoryNotFound(id);
    return memory;
  }

  /**
   * A memory's versions, oldest first (a deleted memory's tombstone last, without text). A memory with no version (its
   * bank keeps no history, or it was stored before history was kept) answers none; an id never stored is a 404.
   */
  async memoryHistory(tenant: string, bankId: string, id: string): Promise<MemoryVersion[]> {
    const versions = await readHistory(this.parts.db, this.parts.codec, tenant, bankId, id);
    if (versions.length === 0 && !(await this.parts.store.get(tenant, bankId, id))) throw memoryNotFound(id);
    return versions;
  }

  /** Hard-deletes a memory and the facts derived from it; answers how many memories went. */
  async deleteMemory(tenant: string, bankId: string, id: string): Promise<number> {
    const count = await deleteMemory(this.parts.db, tenant, bankId, id);
    if (count === 0) throw memoryNotFound(id);
    return count;
  }

  clearMemories(tenant: string, bankId: string, space: string | undefined, type: string | undefined): Promise<number> {
    return clearMemories(this.parts.db, tenant, bankId, space, type);
  }

  /** Deletes the bank's memories (of one space, when given) the filter passes; a dry run counts them. */
  deleteMatching(partition: BankSelection, filter: Filter, dryRun: boolean): Promise<number> {
    this.refuseEncryptedMetadata(filter, '/filter');
    return deleteWhere(this.parts.db, partition, filter, dryRun);
  }

  /**
   * Sets the same fields on every memory of the bank (and space, when given) the selection names, in one transaction;
   * each changed memory gets a version in its history, as a PATCH would. Answers how many memories changed.
   */
  updateMemories(selection: BankSelection, which: MemorySelection, set: MemorySet): Promise<number> {
    if ('filter' in which) this.refuseEncryptedMetadata(which.filter, '/filter');
    return this.parts.store.updateMany(selection, which, set, this.now());
  }

  /** The memories of `ids`, in the order asked: undefined where the bank (or space) holds none of that id. */
  async getMemories(selection: BankSelection, ids: readonly string[]): Promise<Array<Memory | undefined>> {
    const found = new Map((await this.parts.store.getMany(selection, ids, this.now())).map((m) => [m.id, m]));
    return ids.map((id) => found.get(id));
  }

  /**
   * The bank's memories (of one space, when given) in export order (retained memories, then facts, each by id), read
   * from the database a page at a time, so a bank of any size is exported in bounded memory.
   */
  async *exportMemories(selection: BankSelection): AsyncGenerator<ExportedMemory> {
    let after: ExportKey | undefined;
    do {
      const page = await exportPage(this.parts.db, this.parts.store, selection, after, EXPORT_PAGE_ROWS, this.now());
      yield* page.memories;
      after = page.last;
    } while (after !== undefined);
  }

  /** Stores a batch of exported memories (import.ts): one outcome per record, in order. */
  async importMemories(tenant: string, bankId: string, records: readonly ImportRecord[]): Promise<ImportOutcome[]> {
    const outcomes = await importRecords(this.parts, tenant, bankId, records);
    this.parts.metrics.operations.inc({ operation: 'import' });
    this.parts.metrics.memoriesRetained.inc(outcomes.filter((o) => o === 'imported').length);
    return outcomes;
  }

  /**
   * With encryption at rest a memory's metadata is only inside its sealed body: the database cannot read it, so a
   * filter on it would answer differently by tier. It is refused, on every tier and face alike.
   */
  private refuseEncryptedMetadata(filter: Filter | undefined, pointer: string): void {
    if (filter === undefined || !this.parts.codec.encrypted || !fieldsOf(filter).has('metadata')) return;
    throw invalidField(pointer, ENCRYPTED_METADATA_FILTER, pointer.startsWith('/query') ? 'query' : 'body');
  }

  async listBanks(tenant: string, text: string | undefined, page: PageRequest): Promise<Page<Bank>> {
    checkOneStart(page);
    const scope = bankListScope(tenant, text);
    const after =
      page.cursor === undefined
        ? undefined
        : (await this.cursorSeal(false)).decode(BANK_CURSOR, page.cursor, scope, '/query/cursor');
    const { banks, total, last } = await listBanks(this.parts.db, tenant, text, {
      limit: page.limit,
      offset: page.offset,
      after: after && { at: after.at, bankId: after.bankId },
    });
    const next =
      last !== undefined && pageIsFull(page, banks.length)
        ? (await this.cursorSeal(true)).encode(BANK_CURSOR, { list: 'banks', ...last }, scope)
        : null;
    return { items: banks, total, limit: page.limit, offset: page.offset, nextCursor: next };
  }

  async getBank(tenant: string, bankId: string): Promise<Bank> {
    const bank = await getBank(this.parts.db, tenant, bankId);
    if (!bank) throw problem('bank_not_found', 'notYetWritten', { bankId });
    return bank;
  }

  /** Creates the bank or updates it, keeping what `changes` does not name. */
  putBank(tenant: string, bankId: string, changes: BankChanges): Promise<Bank> {
    return putBank(this.parts.db, tenant, bankId, changes);
  }

  async patchBank(tenant: string, bankId: string, changes: BankChanges): Promise<Bank> {
    const bank = await patchBank(this.parts.db, tenant, bankId, changes);
    if (!bank) throw problem('bank_not_found', 'notCreated', { bankId });
    return bank;
  }

  /** Erases the bank and everything derived from it; answers how many memories went. */
  deleteBank(tenant: string, bankId: string): Promise<number> {
    return this.parts.db.transaction((tx) => deleteBank(tx, tenant, bankId));
  }

  bankStats(tenant: string, bankId: string): Promise<BankStats> {
    return bankStats(this.parts.db, tenant, bankId);
  }

  /** The bank's entities, a page at a time (docs/api.md, "Entities"). */
  listEntities(q: EntityListQuery): Promise<EntityPage> {
    return entityPage(this.parts, () => this.cursorSeal(true), q);
  }

  /** One entity with its current facts and timeline; 404 entity_not_found when no memory names it. */
  entity(q: EntityQuery): Promise<EntityDetail> {
    return entityDetail(this.parts, q);
  }

  async operation(tenant: string, id: string): Promise<Operation> {
    const status = await this.features.operationStatus?.(tenant, id);
    if (!status) throw problem('operation_not_found', 'unknown', { id });
    return status;
  }
}
