import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../db/database.js';
import type { Embedder } from '../embeddings/embedder.js';
import { embeddingText } from './embedding-text.js';
import { bankRetentionDays, touchBank } from './bank-store.js';
import { sha256Hex } from '../util/hash.js';
import { eventLoopSlicer } from '../util/yield.js';
import { chunkText } from './chunk.js';
import type { MemoryStore } from './store.js';
import { supersedeMemories } from './supersede.js';
import { nameOperation } from './history-store.js';
import type { Metadata, NewMemory, Partition } from './types.js';

export interface RetainItem {
  content: string;
  /** When it happened; null means "no date" (Hindsight's "unset"), undefined means "now". */
  timestamp: Date | null | undefined;
  context: string | undefined;
  metadata: Metadata | undefined;
  tags: string[] | undefined;
  documentId: string | undefined;
  entities: string[] | undefined;
  /** Memories of the partition this item replaces: their validity ends where its memory's begins. */
  supersedes?: string[] | undefined;
  /** When its memories are forgotten; null: kept; undefined: the bank's retention (retention_days), if it has one. */
  expiresAt?: Date | null | undefined;
  /** Where the item is in its request (a JSON pointer), for errors about it. */
  pointer?: string | undefined;
}

/** What one retained item became. */
export interface ItemOutcome {
  /** Its memories' ids, one per piece (a long item is split); an existing memory's id for content already stored. */
  memoryIds: string[];
  /** How many of its pieces this call stored (0: everything in it was already stored, or came earlier in the call). */
  storedCount: number;
}

export interface RetainOutcome {
  memoryIds: string[];
  /** Per item, in order. */
  items: ItemOutcome[];
  /** Ids stored by this call (not already present). */
  createdIds: string[];
  /** The operation that reports the work this retain started (fact extraction), when there is one. */
  operationId: string | undefined;
}

const DAY_MS = 86_400_000;

/** A retain would store more new memories than its caller allows (a quota-holding gateway sets the bound). */
export class RetainLimitExceeded extends Error {
  constructor(
    readonly wouldStore: number,
    readonly allowed: number,
  ) {
    super(`This retain would store ${wouldStore} new memories; at most ${allowed} are allowed.`);
  }
}

/** How many memories `items` become after chunking: an upper bound of what retaining them stores. */
export async function pieceCount(items: readonly RetainItem[]): Promise<number> {
  let count = 0;
  for (const item of items) count += (await chunkText(item.content.trim())).length;
  return count;
}

/** What retain works with; the engine builds it once. */
export interface RetainDependencies {
  db: Database;
  store: MemoryStore;
  embedder: Embedder;
}

/** The retain a hook runs in. */
export interface RetainRun {
  /** The operation that reports this retain's follow-up work: the caller's, else one created on first use. */
  operationId(): string;
}

/** Runs inside the retain transaction after the rows are written (e.g. to enqueue fact extraction atomically). */
export type AfterRetainHook = (
  tx: Queryable,
  partition: Partition,
  createdIds: string[],
  run: RetainRun,
) => Promise<void>;

export interface RetainOptions {
  afterRetain?: AfterRetainHook | undefined;
  /** Most new memories this call may store; over it, nothing is stored and RetainLimitExceeded is thrown. */
  maxNew?: number | undefined;
  /** The operation this retain belongs to (an async retain's job). */
  operationId?: string | undefined;
  /** The instant of the retain (the engine's clock): a memory's date when it has none, and where retention counts from. */
  now?: Date | undefined;
}

/**
 * Retain: chunk, drop content already stored in the partition (idempotent), embed the rest in shared batches, and
 * store everything in one transaction, so the call stores all of its items or none and is recallable on return.
 */
export async function retain(
  deps: RetainDependencies,
  partition: Partition,
  items: readonly RetainItem[],
  options: RetainOptions = {},
): Promise<RetainOutcome> {
  const now = options.now ?? new Date();
  const { pieces, itemOf } = await chunkItems(await withRetention(deps.db, partition, items, now), now);
  const unique = uniqueByContent(pieces);
  const existing = await deps.store.findByHashes(deps.db, partition, [...unique.keys()]);
  const fresh = [...unique.values()].filter((p) => !existing.has(p.contentHash));
  if (options.maxNew !== undefined && fresh.length > options.maxNew) {
    throw new RetainLimitExceeded(fresh.length, options.maxNew);
  }
  const vectors = await deps.embedder.embed(
    fresh.map((p) => embeddingText(p)),
    'document',
  );
  let operationId = options.operationId;
  const run: RetainRun = { operationId: () => (operationId ??= randomUUID()) };
  const stored = await deps.db.transaction(async (tx) => {
    await touchBank(tx, partition.tenant, partition.bankId);
    // The versions this retain appends (migration 010) name its operation when it has one.
    if (options.operationId !== undefined) await nameOperation(tx, options.operationId);
    const ids = await deps.store.insert(
      tx,
      partition,
      fresh.map((p, i) => ({ ...p, embedding: vectors[i]! })),
    );
    const created = ids.filter((id, i) => id === fresh[i]!.id);
    await supersedeByItems(tx, partition, items, pieces, itemOf, (hash) => {
      const at = fresh.findIndex((p) => p.contentHash === hash);
      return at >= 0 ? ids[at] : existing.get(hash);
    });
    if (options.afterRetain && created.length > 0) await options.afterRetain(tx, partition, created, run);
    return { ids, created };
  });
  const idByHash = new Map(existing);
  fresh.forEach((p, i) => idByHash.set(p.contentHash, stored.ids[i]!));
  const created = new Set(stored.created);
  const perItem: ItemOutcome[] = items.map(() => ({ memoryIds: [], storedCount: 0 }));
  pieces.forEach((p, i) => {
    const id = idByHash.get(p.contentHash)!;
    const outcome = perItem[itemOf[i]!]!;
    outcome.memoryIds.push(id);
    // Only the piece that was stored counts: a later piece with the same content in this call is a duplicate.
    if (created.has(id) && unique.get(p.contentHash) === p) outcome.storedCount++;
  });
  return {
    memoryIds: pieces.map((p) => idByHash.get(p.contentHash)!),
    items: perItem,
    createdIds: stored.created,
    operationId,
  };
}

/**
 * The items with their expiry settled: one without an expiry of its own expires `retention_days` after `now` when its
 * bank has a retention, else never. Memories already stored keep theirs (a retain of the same content stores nothing).
 */
export async function withRetention(
  db: Queryable,
  partition: Partition,
  items: readonly RetainItem[],
  now: Date,
): Promise<RetainItem[]> {
  if (items.every((item) => item.expiresAt !== undefined)) return [...items];
  const days = await bankRetentionDays(db, partition.tenant, partition.bankId);
  const keptUntil = days === null ? null : new Date(now.getTime() + days * DAY_MS);
  return items.map((item) => (item.expiresAt === undefined ? { ...item, expiresAt: keptUntil } : item));
}

/** Each item's `supersedes` closed by the item's (first) memory, `idOf` answering a stored content's id. */
async function supersedeByItems(
  tx: Queryable,
  partition: Partition,
  items: readonly RetainItem[],
  pieces: readonly NewMemory[],
  itemOf: readonly number[],
  idOf: (contentHash: string) => string | undefined,
): Promise<void> {
  for (const [index, item] of items.entries()) {
    if (item.supersedes === undefined || item.supersedes.length === 0) continue;
    const first = pieces[itemOf.indexOf(index)];
    const id = first && idOf(first.contentHash);
    if (id !== undefined) await supersedeMemories(tx, partition, item.supersedes, id);
  }
}

/**
 * The items as the memories they become: chunked, numbered in order within one retain call (its batch), with the
 * index of the item each piece came from. Hashing a large item's pieces yields to the event loop every few ms.
 */
async function chunkItems(items: readonly RetainItem[], now: Date): Promise<{ pieces: NewMemory[]; itemOf: number[] }> {
  const pause = eventLoopSlicer();
  const batchId = randomUUID();
  const pieces: NewMemory[] = [];
  const itemOf: number[] = [];
  let seq = 0;
  for (const [index, item] of items.entries()) {
    for (const { text, tokens } of await chunkText(item.content.trim())) {
      itemOf.push(index);
      pieces.push({
        id: randomUUID(),
        type: 'raw',
        text,
        context: item.context ?? null,
        metadata: item.metadata ?? {},
        tags: item.tags ?? [],
        entities: item.entities ?? [],
        documentId: item.documentId ?? null,
        sourceId: null,
        batchId,
        seq: seq++,
        contentHash: sha256Hex(text),
        tokenCount: tokens,
        occurredAt: item.timestamp === undefined ? now : item.timestamp,
        expiresAt: item.expiresAt ?? null,
      });
      await pause();
    }
  }
  return { pieces, itemOf };
}

/** Identical content within one call is stored once: the first piece of each content hash. */
function uniqueByContent(pieces: readonly NewMemory[]): Map<string, NewMemory> {
  const unique = new Map<string, NewMemory>();
  for (const p of pieces) if (!unique.has(p.contentHash)) unique.set(p.contentHash, p);
  return unique;
}
