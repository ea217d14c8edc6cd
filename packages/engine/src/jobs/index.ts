import { randomUUID } from 'node:crypto';
import { touchBank } from '../banks/store.js';
import type { Engine } from '../engine.js';
import { retain, type RetainItem } from '../memory/retain.js';
import type { Partition } from '../memory/types.js';
import type { Queryable } from '../db/database.js';
import { operationStatus } from './operations.js';
import { JobFailure, JobQueue, type ClaimedJob, type JobContext } from './queue.js';

export { JobQueue, JobFailure, LeaseLostError, type ClaimedJob, type JobContext, type JobHandler } from './queue.js';

const queues = new WeakMap<Engine, JobQueue>();

export function jobQueue(engine: Engine): JobQueue | undefined {
  return queues.get(engine);
}

interface StoredItem {
  content: string;
  timestamp: string | null;
  context: string | null;
  metadata: Record<string, string> | null;
  tags: string[] | null;
  document_id: string | null;
  entities: string[] | null;
}

/** async: true: validate now, store the items in a job, answer at once with the operation id. */
export async function retainAsync(engine: Engine, partition: Partition, items: readonly RetainItem[]) {
  const queue = queues.get(engine);
  if (!queue) throw new Error('the job queue is not installed');
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
  }));
  const operationId = randomUUID();
  await engine.db.transaction(async (tx) => {
    await touchBank(tx, partition.tenant, partition.bankId);
    // With encryption at rest the queued content is sealed like a memory body (bound to this operation's id), so it
    // is never on disk in plaintext, even while it waits.
    const bank = await engine.codec.forWrite(tx, partition.tenant, partition.bankId);
    const sealed = bank.seal(operationId, { text: JSON.stringify(stored), context: null, metadata: {}, entities: [] });
    const payload = sealed.bodyEnc ? { sealed: sealed.bodyEnc.toString('base64') } : { items: stored };
    await queue.enqueue(tx, operationId, partition, 'retain', [{ kind: 'retain', payload }], items.length);
  });
  queue.wake();
  engine.metrics.operations.inc({ operation: 'retain' });
  return { success: true, bank_id: partition.bankId, items_count: items.length, memory_ids: [] as string[], async: true, operation_id: operationId };
}

/** The items of an async retain job, opening them first when they were sealed under encryption at rest. */
async function queuedItems(engine: Engine, job: ClaimedJob): Promise<StoredItem[]> {
  const sealed = job.payload['sealed'];
  if (typeof sealed !== 'string') return (job.payload['items'] ?? []) as StoredItem[];
  const [body] = await engine.codec.openRows(engine.db, job.tenant, [
    { id: job.operationId, bank_id: job.bankId, text: null, context: null, metadata: null, body_enc: Buffer.from(sealed, 'base64'), entities: [] },
  ]);
  if (!body) throw new JobFailure('the queued items failed to decrypt (wrong key or tampered job payload)', true);
  return JSON.parse(body.text) as StoredItem[];
}

/**
 * Installs the durable job queue (async retain; the LLM layer adds fact extraction to it), its status lookup
 * (GET /v1/{tenant}/operations/{id}) and its shutdown. Idempotent.
 */
/** The content now lives in memories; a copy kept in the job would survive a later hard delete. */
async function clearQueuedCopy(tx: Queryable, jobId: string): Promise<void> {
  await tx.query(`UPDATE jobs SET payload = '{}'::jsonb WHERE id = $1`, [jobId]);
}

export async function installJobQueue(engine: Engine): Promise<JobQueue> {
  const existing = queues.get(engine);
  if (existing) return existing;
  const queue = new JobQueue(engine.db, engine.log, {
    // Twice the LLM cap: while some jobs wait on the model, others read, embed and write, so the model stays busy
    // (the LLM client's own semaphore holds calls in flight to MNEMOS_API_LLM_CONCURRENCY).
    concurrency: engine.config.llm ? engine.config.llm.concurrency * 2 : 2,
    exclusive: engine.db.kind === 'embedded',
    onDepth: (n) => engine.metrics.queueDepth.set({ queue: 'jobs' }, n),
  });
  queues.set(engine, queue);

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
    }));
    const partition = { tenant: job.tenant, bankId: job.bankId, space: job.space };
    const outcome = await retain(engine.retainDependencies, partition, items, {
      operationId: job.operationId,
      // The job completes in the same transaction that stores its memories, and its copy of the content goes in that
      // transaction too: no reader ever sees a completed retain whose content is still queued.
      afterRetain: async (tx, p, ids, run) => {
        if (!ctx.completed) {
          await ctx.completeWithin(tx, { memory_ids: ids });
          await clearQueuedCopy(tx, job.id);
        }
        await engine.afterRetain(tx, p, ids, run);
      },
    });
    engine.metrics.memoriesRetained.inc(outcome.createdIds.length);
    // Nothing new stored (every item already present): the job completes here, its copy cleared in the same step.
    if (!ctx.completed) await ctx.complete((tx) => clearQueuedCopy(tx, job.id), { memory_ids: outcome.memoryIds });
    await engine.db.query('UPDATE operations SET memory_ids = $2::uuid[], updated_at = now() WHERE id = $1', [job.operationId, outcome.memoryIds]);
  });

  engine.operations = (tenant, id) => operationStatus(engine.db, tenant, id);
  await queue.start();
  engine.closers.push(() => queue.stop());
  return queue;
}
