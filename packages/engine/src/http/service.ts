import { recall } from '../recall/pipeline.js';
import type { RecallHit, TagsMatch } from '../recall/types.js';
import { pieceCount, retain, RetainLimitExceeded } from '../memory/retain.js';
import { jobQueue, retainAsync } from '../jobs/index.js';
import { ZERO_USAGE } from '../llm/types.js';
import { DEFAULT_SPACE, MEMORY_TYPES, type Memory, type Partition } from '../memory/types.js';
import type { Engine } from '../engine.js';
import { parseTags, parseTimestamp, retainItems, checkText } from './normalize.js';
import { Problem } from './problem.js';
import type { RecallBodyT, RetainBodyT } from './schemas.js';

/** The operations behind the HTTP paths, shared by the bank, space and description-level routes. */

export const BUDGETS = { low: 40, mid: 100, high: 300 } as const;
export const DEFAULT_MAX_TOKENS = 4096;

/** Header by which a caller (a gateway holding quota) bounds how many new memories one retain may store. */
export const MAX_NEW_MEMORIES_HEADER = 'x-mnemos-max-new-memories';

/** The bound a request sets with MAX_NEW_MEMORIES_HEADER, if any. */
export function maxNewMemories(headers: Record<string, string | string[] | undefined>): number | undefined {
  const value = headers[MAX_NEW_MEMORIES_HEADER];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d{1,9}$/.test(value)) {
    throw new Problem(400, 'validation_failed',
      `${MAX_NEW_MEMORIES_HEADER} must be a whole number of memories (0 to 999999999).`);
  }
  return Number(value);
}

const retainLimitProblem = (wouldStore: number, allowed: number) =>
  new Problem(413, 'too_many_memories',
    `This retain would store ${wouldStore} new memories after chunking, more than the ${allowed} allowed; ` +
      'send less content or raise the quota.',
    undefined, { 'x-mnemos-would-store': String(wouldStore) });

export async function retainOperation(engine: Engine, partition: Partition, body: RetainBodyT, maxNew?: number) {
  const items = retainItems(body);
  // async: true stores the items as a durable job and answers at once with its operation id. The job stores at most
  // the pieces counted here, so the bound holds for it too.
  if (body.async === true && jobQueue(engine)) {
    const pieces = maxNew === undefined ? 0 : await pieceCount(items);
    if (maxNew !== undefined && pieces > maxNew) throw retainLimitProblem(pieces, maxNew);
    return retainAsync(engine, partition, items);
  }
  let outcome;
  try {
    outcome = await retain(engine.retainDependencies, partition, items, { afterRetain: engine.afterRetain, maxNew });
  } catch (error) {
    if (error instanceof RetainLimitExceeded) throw retainLimitProblem(error.wouldStore, error.allowed);
    throw error;
  }
  const { operationId } = outcome;
  engine.metrics.operations.inc({ operation: 'retain' });
  engine.metrics.memoriesRetained.inc(outcome.createdIds.length);
  return {
    success: true,
    bank_id: partition.bankId,
    items_count: items.length,
    memory_ids: outcome.memoryIds,
    // New memories this call stored (content already present is not stored again): what a quota counts.
    stored_count: outcome.createdIds.length,
    async: false,
    // Fact extraction (with an LLM) runs after the call; its operation reports progress and token usage.
    ...(operationId !== undefined ? { operation_id: operationId } : {}),
    usage: { ...ZERO_USAGE },
  };
}

/** Shapes a memory for the wire: our fields plus the names Hindsight clients read. */
export function memoryAnswer(m: Memory) {
  return { ...m, fact_type: m.type };
}

/**
 * Adds the Hindsight name for the date to a recall result. The result is this call's own object, so the field is set
 * on it rather than copied with a spread (about 0.1 ms per 100 results, measured).
 */
export function recallHitAnswer(h: RecallHit): RecallHit & { mentioned_at?: string } {
  const answer: RecallHit & { mentioned_at?: string } = h;
  if (h.occurred_at) answer.mentioned_at = h.occurred_at;
  return answer;
}

/**
 * Route option for the recall routes: answers are written with JSON.stringify instead of the schema-compiled
 * serializer. A recall answers up to 100 results built by the engine with exactly the schema's fields, so the compiled
 * serializer's field filtering adds nothing, and it was slower on them (0.31 against 0.20 ms per answer of about
 * 68 KB, lab probe on real results). The response schema still documents the answer in /openapi.json.
 */
export const plainJsonAnswers = { serializerCompiler: () => (data: unknown) => JSON.stringify(data) } as const;

export async function recallOperation(engine: Engine, tenant: string, bankId: string, body: RecallBodyT) {
  checkText(body.query, '/query');
  if (!/[\p{L}\p{N}]/u.test(body.query)) {
    throw new Problem(400, 'validation_failed', 'The query has no letters or digits; ask a question in words.', [
      { pointer: '/query', detail: 'must contain at least one letter or digit' },
    ]);
  }
  const types = body.types ?? undefined;
  const unknownType = types?.find((t) => !(MEMORY_TYPES as readonly string[]).includes(t));
  if (unknownType !== undefined) {
    throw new Problem(400, 'validation_failed', `Unknown memory type ${JSON.stringify(unknownType)}; use one of ${MEMORY_TYPES.join(', ')}.`, [
      { pointer: '/types', detail: `must be among ${MEMORY_TYPES.join(', ')}` },
    ]);
  }
  const budget = body.budget ?? 'mid';
  const outcome = await recall(engine.recallDependencies, {
    tenant,
    bankId,
    space: body.space ?? DEFAULT_SPACE,
    query: body.query,
    maxTokens: body.max_tokens ?? DEFAULT_MAX_TOKENS,
    candidates: typeof budget === 'number' ? budget : BUDGETS[budget],
    includeOrg: body.include_org ?? false,
    types,
    tags: parseTags(body.tags, '/tags'),
    tagsMatch: (body.tags_match ?? 'any') as TagsMatch,
    queryTimestamp: parseTimestamp(body.query_timestamp, '/query_timestamp') ?? new Date(),
    trace: body.trace ?? false,
  });
  engine.metrics.operations.inc({ operation: 'recall' });
  return {
    results: outcome.results.map(recallHitAnswer),
    usage: { tokens: outcome.tokens },
    entities: {},
    ...(outcome.trace ? { trace: outcome.trace } : {}),
  };
}
