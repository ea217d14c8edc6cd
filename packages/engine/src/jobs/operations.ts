import type { Queryable } from '../db/database.js';
import { maxOf } from '../util/extremes.js';

interface OperationRow {
  id: string;
  bank_id: string;
  space: string;
  kind: string;
  items_count: number;
  memory_ids: string[];
  created_at: Date | string;
  updated_at: Date | string;
}

interface JobStatusRow {
  id: string;
  kind: string;
  memory_id: string | null;
  status: string;
  attempts: number;
  last_error: string | null;
  result: Record<string, unknown> | null;
  tokens_input: string | number;
  tokens_output: string | number;
  updated_at: Date | string;
  finished_at: Date | string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type OperationState = 'pending' | 'running' | 'completed' | 'failed';

export interface OperationJobError {
  jobId: string;
  kind: string;
  memoryId: string | null;
  status: string;
  attempts: number;
  error: string | null;
}

/** An async retain or an extraction, summed over its jobs. */
export interface Operation {
  id: string;
  kind: string;
  status: OperationState;
  bankId: string;
  space: string;
  itemsCount: number;
  memoryIds: string[];
  factIds: string[];
  jobs: { total: number; queued: number; running: number; succeeded: number; failed: number };
  errors: OperationJobError[];
  usage: { inputTokens: number; outputTokens: number };
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

const latest = (dates: Date[]): Date => new Date(maxOf(dates.map((d) => d.getTime())));

/**
 * An operation's status, summed over its jobs: `pending` (nothing started), `running`, `completed` (every job done)
 * or `failed` (every job settled and at least one failed, with its error). Hindsight clients poll until
 * completed/failed.
 */
export async function operationStatus(db: Queryable, tenant: string, id: string): Promise<Operation | undefined> {
  if (!UUID.test(id)) return undefined;
  const [op] = await db.query<OperationRow>(
    'SELECT id, bank_id, space, kind, items_count, memory_ids, created_at, updated_at FROM operations WHERE tenant = $1 AND id = $2',
    [tenant, id],
  );
  if (!op) return undefined;
  const jobs = await db.query<JobStatusRow>(
    `SELECT id, kind, memory_id, status, attempts, last_error, result, tokens_input, tokens_output, updated_at, finished_at
     FROM jobs WHERE tenant = $1 AND operation_id = $2 ORDER BY created_at, id`,
    [tenant, id],
  );
  const count = (s: string) => jobs.filter((j) => j.status === s).length;
  const counts = {
    total: jobs.length,
    queued: count('queued'),
    running: count('running'),
    succeeded: count('succeeded'),
    failed: count('failed'),
  };
  const open = counts.queued + counts.running;
  const status =
    open > 0
      ? counts.running > 0 || counts.succeeded + counts.failed > 0
        ? 'running'
        : 'pending'
      : counts.failed > 0
        ? 'failed'
        : 'completed';
  const factIds = jobs.flatMap((j) =>
    Array.isArray(j.result?.['fact_ids']) ? (j.result['fact_ids'] as string[]) : [],
  );
  const memoryIds = new Set<string>(op.memory_ids);
  for (const j of jobs) {
    if (Array.isArray(j.result?.['memory_ids'])) for (const m of j.result['memory_ids'] as string[]) memoryIds.add(m);
  }
  const errors = jobs
    .filter((j) => j.last_error !== null && j.status !== 'succeeded')
    .map((j) => ({
      jobId: j.id,
      kind: j.kind,
      memoryId: j.memory_id,
      status: j.status,
      attempts: j.attempts,
      error: j.last_error,
    }));
  const createdAt = new Date(op.created_at);
  const finishedAts = jobs.flatMap((j) => (j.finished_at ? [new Date(j.finished_at)] : []));
  return {
    id: op.id,
    kind: op.kind,
    status,
    bankId: op.bank_id,
    space: op.space,
    itemsCount: op.items_count,
    memoryIds: [...memoryIds],
    factIds,
    jobs: counts,
    errors,
    usage: {
      inputTokens: jobs.reduce((a, j) => a + Number(j.tokens_input), 0),
      outputTokens: jobs.reduce((a, j) => a + Number(j.tokens_output), 0),
    },
    createdAt,
    updatedAt: latest([new Date(op.updated_at), ...jobs.map((j) => new Date(j.updated_at))]),
    finishedAt: open === 0 && jobs.length > 0 ? latest([createdAt, ...finishedAts]) : null,
  };
}

/** Records the memories an operation ended with (an async retain's, once its job has run). */
export async function setOperationMemoryIds(
  q: Queryable,
  tenant: string,
  operationId: string,
  memoryIds: readonly string[],
): Promise<void> {
  await q.query('UPDATE operations SET memory_ids = $3::uuid[], updated_at = now() WHERE tenant = $1 AND id = $2', [
    tenant,
    operationId,
    [...memoryIds],
  ]);
}
