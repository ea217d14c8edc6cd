import { randomUUID } from 'node:crypto';
import { touchBank } from '../memory/bank-store.js';
import type { EngineConfig } from '../config/load.js';
import type { BodyCodec } from '../crypto/codec.js';
import type { Database } from '../db/database.js';
import type { Embedder } from '../embeddings/embedder.js';
import type { Logger } from '../log.js';
import type { EngineMetrics } from '../metrics.js';
import { retain, type AfterRetainHook, type RetainItem } from '../memory/retain.js';
import type { MemoryStore } from '../memory/store.js';
import type { Metadata, Partition } from '../memory/types.js';
import { setOperationMemoryIds } from './operations.js';
import { clearJobPayload, JobFailure, JobQueue, type ClaimedJob } from './queue.js';

export { JobQueue, JobFailure, type ClaimedJob, type JobContext } from './queue.js';

/** What the job queue and async retain work with (its db, store and embedder are a retain's dependencies). */
export interface JobParts {
  config: EngineConfig;
  db: Database;
  /** Seals an async retain's queued content like a memory body. */
  codec: BodyCodec;
  store: MemoryStore;
  embedder: Embedder;
  log: Logger;
  metrics: EngineMetrics;
  /** The retain hook chain every retain runs, async ones included. */
  afterRetain: AfterRetainHook;
}

interface StoredItem {
  content: string;
  timestamp: string | null;
  context: string | null;
  metadata: Metadata | null;
  tags: string[] | null;
  document_id: string | null;
  entities: string[] | null;
  supersedes?: string[];
  /** Absent: settled when the job runs (the bank's retention then). */
  expires_at?: string | null;
}

/** async: true: validate now, store the items in a job, answer at once with the operation id. */
export async function retainAsync(
  engine: Pick<JobParts, 'db' | 'codec'>,
  queue: JobQueue,
  partition: Partition,
  items: readonly RetainItem[],
): Promise<string> {
  const now = new Date().toISOString();
  const stored: StoredItem[] = items.map((i) => ({
    content: i.content,
    // "Now" is the moment of the call, not the moment the job runs.
    timestamp: i.timestamp === undefined ? now : i.timestamp === null ? null : i.timestamp.toISOString(),
    context: i.context ?? null,
    metadata: i.metadata ?? null,
    tags: i.tags ?? null,
    document_id: i.documentId ?? null,
    entities: i.entities ?? null,
    ...(i.supersedes?.length ? { supersedes: i.supersedes } : {}),
    ...(i.expiresAt !== undefined ? { expires_at: i.expiresAt === null ? null : i.expiresAt.toISOString() } : {}),
  }));
  const operationId = randomUUID();
  await engine.db.transaction(async (tx) => {
    await touchBank(tx, partition.tenant, partition.bankId);
    // With encryption at rest the queued content is sealed like a memory body (bound to this operation's id), so it
    // is never on disk in plaintext, even while it waits.
    const bank = await engine.codec.forWrite(tx, partition.tenant, partition.bankId);
    const sealed = await bank.seal(operationId, {
      text: JSON.stringify(stored),
      context: null,
      metadata: {},
      entities: [],
    });
    const payload = sealed.bodyEnc ? { sealed: sealed.bodyEnc.toString('base64') } : { items: stored };
    await queue.enqueue(tx, operationId, partition, 'retain', [{ kind: 'retain', payload }], items.length);
  });
  queue.wake();
  return operationId;
}

/** The items of an async retain job, opening them first when they were sealed under encryption at rest. */
async function queuedItems(engine: Pick<JobParts, 'db' | 'codec'>, job: ClaimedJob): Promise<StoredItem[]> {
  const sealed = job.payload['sealed'];
  if (typeof sealed !== 'string') return (job.payload['items'] ?? []) as StoredItem[];
  const [body] = await engine.codec.openRows(engine.db, job.tenant, [
    {
      id: job.operationId,
      bank_id: job.bankId,
      text: null,
      context: null,
      metadata: null,
      body_enc: Buffer.from(sealed, 'base64'),
      entities: [],
    },
  ]);
  if (!body) throw new JobFailure('the queued items failed to decrypt (wrong key or tampered job payload)', true);
  return JSON.parse(body.text) as StoredItem[];
}

/** The durable job queue (async retain; fact extraction when an LLM is configured); started once handlers are in. */
export function createJobQueue(engine: Pick<JobParts, 'config' | 'db' | 'log' | 'metrics'>): JobQueue {
  return new JobQueue(engine.db, engine.log, {
    // Twice the LLM cap: while some jobs wait on the model, others read, embed and write, so the model stays busy
    // (the LLM client's own semaphore holds calls in flight to MNEMOS_API_LLM_CONCURRENCY).
    concurrency: engine.config.llm ? engine.config.llm.concurrency * 2 : 2,
    exclusive: engine.db.kind === 'embedded',
    pollMs: engine.config.jobsPollIntervalMs,
    onDepth: (n) => engine.metrics.queueDepth.set({ queue: 'jobs' }, n),
  });
}

/**
 * Registers the job that stores an async retain's items. The job's retain carries the job's operation id, so the
 * follow-up work its hooks enqueue (fact extraction) reports under the operation the caller already holds.
 */
export function registerAsyncRetain(engine: JobParts, queue: JobQueue): void {
  queue.register('retain', async (job, ctx) => {
    const raw = await queuedItems(engine, job);
    const items: RetainItem[] = raw.map((i) => ({
      content: i.content,
      timestamp: i.timestamp === null ? null : new Date(i.timestamp),
      context: i.context ?? undefined,
      metadata: i.metadata ?? undefined,
      tags: i.tags ?? undefined,
      documentId: i.document_id ?? undefined,
      entities: i.entities ?? undefined,
      supersedes: i.supersedes,
      expiresAt: i.expires_at === undefined ? undefined : i.expires_at === null ? null : new Date(i.expires_at),
    }));
    const partition = { tenant: job.tenant, bankId: job.bankId, space: job.space };
    const outcome = await retain(engine, partition, items, {
      operationId: job.operationId,
      // The job completes in the same transaction that stores its memories, and its copy of the content goes in that
      // transaction too: no reader ever sees a completed retain whose content is still queued.
      afterRetain: async (tx, p, ids, run) => {
        if (!ctx.completed) {
          await ctx.completeWithin(tx, { memory_ids: ids });
          await clearJobPayload(tx, job.tenant, job.id);
        }
        await engine.afterRetain(tx, p, ids, run);
      },
    });
    engine.metrics.memoriesRetained.inc(outcome.createdIds.length);
    // Nothing new stored (every item already present): the job completes here, its copy cleared in the same step.
    if (!ctx.completed)
      await ctx.complete((tx) => clearJobPayload(tx, job.tenant, job.id), { memory_ids: outcome.memoryIds });
    await setOperationMemoryIds(engine.db, job.tenant, job.operationId, outcome.memoryIds);
  });
}
