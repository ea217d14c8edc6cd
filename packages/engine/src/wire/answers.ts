import { ZERO_USAGE } from '../llm/types.js';
import { ORG_BANK_ID, type ExportedMemory } from '../memory/types.js';
import type {
  Bank,
  BankStats,
  Memory,
  Operation,
  Page,
  RecallHit,
  RecallResult,
  ReflectResult,
  RetainResult,
} from '../service/types.js';

/**
 * The service's answers in the public JSON shapes: snake_case, ISO 8601 dates, and the names Hindsight clients read
 * (`fact_type`, `mentioned_at`, `background`, `total_nodes`, ...).
 */

/** A space's org memory is stored under the empty bank id; callers know it as `org:<space>`, as its retain answers. */
export const wireBankId = (bankId: string, space: string): string => (bankId === ORG_BANK_ID ? `org:${space}` : bankId);

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/**
 * A memory's wire fields: the one place a memory's JSON names are written. Written out rather than built by spreading
 * and renaming: a recall answers up to 100 of them. Its dates are already ISO text (memory/types.ts Timestamp).
 */
function memoryFields(m: Memory) {
  return {
    id: m.id,
    bank_id: wireBankId(m.bankId, m.space),
    space: m.space,
    type: m.type,
    text: m.text,
    context: m.context,
    metadata: m.metadata,
    tags: m.tags,
    entities: m.entities,
    document_id: m.documentId,
    source_id: m.sourceId,
    occurred_at: m.occurredAt,
    created_at: m.createdAt,
    updated_at: m.updatedAt,
    state: m.state,
    superseded_by: m.supersededBy,
    valid_from: m.validFrom,
    valid_to: m.validTo,
    expires_at: m.expiresAt,
  };
}

export function memoryAnswer(m: Memory) {
  return Object.assign(memoryFields(m), { fact_type: m.type });
}

export const memoryPageAnswer = (page: Page<Memory>) => ({
  items: page.items.map(memoryAnswer),
  total: page.total,
  limit: page.limit,
  offset: page.offset,
  next_cursor: page.nextCursor,
});

/** A recall result: the memory's fields with its score, and `mentioned_at` (Hindsight's name for the date). */
export function recalledAnswer(h: RecallHit) {
  const answer = Object.assign(memoryFields(h.memory), { score: h.score, scores: h.scores, relevance: h.relevance });
  return Object.assign(
    answer,
    h.truncated ? { truncated: true as const } : {},
    h.org ? { org: true as const } : {},
    answer.occurred_at !== null ? { mentioned_at: answer.occurred_at } : {},
  );
}

export function recallAnswer(r: RecallResult) {
  return {
    results: r.hits.map(recalledAnswer),
    usage: { tokens: r.tokens },
    entities: {},
    ...(r.trace ? { trace: { stages: r.trace.stages, total_ms: r.trace.totalMs } } : {}),
  };
}

/**
 * A retain's answer. The last `messageCount` items were the body's chat messages (wire/input.ts puts them after the
 * items): a synchronous answer says, per message, its memories and whether it was already stored.
 */
export function retainAnswer(bankId: string, r: RetainResult, messageCount = 0) {
  if (r.async) {
    return {
      success: true,
      bank_id: bankId,
      items_count: r.itemsCount,
      memory_ids: [] as string[],
      async: true,
      operation_id: r.operationId,
    };
  }
  return {
    success: true,
    bank_id: bankId,
    items_count: r.itemsCount,
    memory_ids: r.memoryIds,
    stored_count: r.storedCount,
    async: false,
    ...(r.operationId !== undefined ? { operation_id: r.operationId } : {}),
    usage: { ...ZERO_USAGE },
    ...(messageCount > 0
      ? {
          messages: r.items.slice(r.items.length - messageCount).map((item) => ({
            memory_ids: item.memoryIds,
            duplicate: item.storedCount === 0,
          })),
        }
      : {}),
  };
}

const usageAnswer = (u: { inputTokens: number; outputTokens: number }) => ({
  input_tokens: u.inputTokens,
  output_tokens: u.outputTokens,
  total_tokens: u.inputTokens + u.outputTokens,
});

export function bankAnswer(b: Bank) {
  return {
    bank_id: b.bankId,
    name: b.name,
    mission: b.mission,
    background: b.mission,
    disposition: b.disposition,
    space: b.space,
    created_at: b.createdAt.toISOString(),
    updated_at: b.updatedAt.toISOString(),
    last_write_at: iso(b.lastWriteAt),
    memory_count: b.memoryCount,
    usage: usageAnswer(b.usage),
    history: b.history,
    retention_days: b.retentionDays,
  };
}

export const bankPageAnswer = (page: Page<Bank>) => ({
  banks: page.items.map(bankAnswer),
  total: page.total,
  limit: page.limit,
  offset: page.offset,
  next_cursor: page.nextCursor,
});

export function bankStatsAnswer(s: BankStats) {
  const total = Object.values(s.memoriesByType).reduce((a, b) => a + b, 0);
  return {
    bank_id: s.bankId,
    total_nodes: total,
    total_memories: total,
    nodes_by_fact_type: s.memoriesByType,
    last_memory_write_at: iso(s.lastWriteAt),
    usage: usageAnswer(s.usage),
  };
}

export function reflectAnswer(r: ReflectResult) {
  return {
    text: r.text,
    citations: r.citations,
    ...(r.basedOn
      ? {
          based_on: {
            memories: r.basedOn.map(({ memory: m, score }) => ({
              id: m.id,
              text: m.text,
              type: m.type,
              fact_type: m.type,
              occurred_at: m.occurredAt,
              source_id: m.sourceId,
              superseded_by: m.supersededBy,
              score,
            })),
            mental_models: [],
            directives: [],
          },
        }
      : {}),
    ...(r.hasStructuredOutput ? { structured_output: r.structuredOutput } : {}),
    usage: r.usage,
  };
}

export const updateAnswer = (count: number) => ({ success: true, updated_count: count });

/** A bulk get's answer: one entry per id asked, in order, the memory or null where there is none. */
export const memoriesAnswer = (ids: readonly string[], memories: ReadonlyArray<Memory | undefined>) => ({
  items: ids.map((id, i) => {
    const memory = memories[i];
    return { id, found: memory !== undefined, memory: memory === undefined ? null : memoryAnswer(memory) };
  }),
});

export const deleteAnswer = (count: number, message?: string) => ({
  success: true,
  deleted_count: count,
  ...(message !== undefined ? { message } : {}),
});

/** An operation's status; `operation_id` repeats `id` for Hindsight clients, which poll until completed or failed. */
export function operationAnswer(o: Operation) {
  const errors = o.errors.map((e) => ({
    job_id: e.jobId,
    kind: e.kind,
    memory_id: e.memoryId,
    status: e.status,
    attempts: e.attempts,
    error: e.error,
  }));
  return {
    id: o.id,
    operation_id: o.id,
    kind: o.kind,
    status: o.status,
    bank_id: o.bankId,
    space: o.space,
    items_count: o.itemsCount,
    memory_ids: o.memoryIds,
    fact_ids: o.factIds,
    facts_count: o.factIds.length,
    jobs: o.jobs,
    errors,
    ...(o.status === 'failed'
      ? {
          error_message: errors
            .map((e) => e.error)
            .join('; ')
            .slice(0, 2000),
        }
      : {}),
    usage: usageAnswer(o.usage),
    created_at: o.createdAt.toISOString(),
    updated_at: o.updatedAt.toISOString(),
    finished_at: iso(o.finishedAt),
  };
}

/**
 * A memory as one line of an export (application/x-ndjson): its wire fields and its place in the call that stored it
 * (`batch_id`, `batch_seq`), which an import reads back.
 */
export function exportLine({ memory, place }: ExportedMemory): string {
  const fields =
    place === null ? memoryFields(memory) : { ...memoryFields(memory), batch_id: place.batchId, batch_seq: place.seq };
  return `${JSON.stringify(fields)}\n`;
}
