import type { components, operations } from './generated/types.js';

/**
 * Friendly names for the request and answer shapes of the engine's OpenAPI document (generated/types.ts). The
 * gateway serves the same shapes under /v1/me.
 */
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type RequestBody<O extends keyof operations> = Json<NonNullable<operations[O]['requestBody']>>;
type Ok<O extends keyof operations> = operations[O]['responses'] extends { 200: infer R } ? Json<R> : never;
type Query<O extends keyof operations> = NonNullable<operations[O]['parameters']['query']>;

export type Memory = components['schemas']['Memory'];
export type Bank = components['schemas']['Bank'];
export type Problem = components['schemas']['Problem'];

export type RetainRequest = RequestBody<'retainMemories'>;
export type RetainItem = NonNullable<RetainRequest['items']>[number];
export type RetainResult = Ok<'retainMemories'>;
export type RecallRequest = RequestBody<'recallMemories'>;
export type RecallResult = Ok<'recallMemories'>;
export type RecallHit = RecallResult['results'][number];
export type ReflectRequest = RequestBody<'reflectBank'>;
export type BankProfile = RequestBody<'putBank'>;
export type BankList = Ok<'listBanks'>;
export type BankListQuery = Query<'listBanks'>;
export type MemoryList = Ok<'listMemories'>;
export type MemoryListQuery = Query<'listMemories'>;
export type MemoryPatch = RequestBody<'updateMemory'>;
/** A memory's versions, oldest first (`GET .../memories/{id}/history`). */
export type MemoryHistory = Ok<'getMemoryHistory'>;
export type MemoryVersion = MemoryHistory['items'][number];
/** A page of a bank's entities (`GET .../entities`): names its memories carry, with kinds, counts and dates. */
export type EntityList = Ok<'listEntities'>;
export type EntityListQuery = Query<'listEntities'>;
export type Entity = EntityList['items'][number];
/** One entity (`GET .../entities/{name}`): its current facts and the timeline of their changes. */
export type EntityDetail = Ok<'getEntity'>;
export type EntityQuery = Query<'getEntity'>;
export type EntityEvent = EntityDetail['timeline'][number];
export type ClearQuery = Query<'clearMemories'>;
export type BulkUpdateRequest = RequestBody<'updateMatchingMemories'>;
/** What a bulk update sets on every memory it selects. */
export type MemorySet = BulkUpdateRequest['set'];
export type BulkUpdateResult = Ok<'updateMatchingMemories'>;
/** A bulk get's answer: one entry per id asked, in order; `found: false` (and `memory: null`) where there is none. */
export type MemoriesResult = Ok<'getMemories'>;
/**
 * One line of an export: a memory's fields (`source_id` names a fact's source) and its place in the call that stored
 * it (`batch_id`, `batch_seq`), which an import keeps.
 */
export type ExportedMemory = Omit<Memory, 'fact_type'> & { batch_id?: string; batch_seq?: number };
export type ExportQuery = Query<'exportMemories'>;
export type ImportQuery = Query<'importMemories'>;
/** What an import did: memories stored, already there (skipped), and the lines it could not use, with why. */
export type ImportResult = Ok<'importMemories'>;
export type DeleteResult = Ok<'deleteMemory'>;
export type Budget = NonNullable<RecallRequest['budget']>;
/** A chat turn for retainMessages: `{role, content, name?, timestamp?}`. */
export type ChatMessage = NonNullable<RetainRequest['messages']>[number];

/** What bulk delete answers: how many memories the filter passed (and were deleted, unless a dry run). */
export type DeleteMatchingResult = Ok<'deleteMatchingMemories'>;

/** A JSON value: what metadata holds under its keys, at any depth. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * A memory's metadata: any JSON under string keys, at most 8 levels deep and 64 KiB as JSON (docs/api.md,
 * "Metadata"). A map of strings is one case of it.
 */
export type Metadata = { [key: string]: JsonValue };

/** What `in`, `nin` and a metadata `contains` compare with. */
type FilterScalar = string | number | boolean;

/** The operators of one condition; several in one object must all hold (`{gte: 2, lt: 5}` is a range). */
export interface FilterOperators {
  /** Equal: numbers by value, objects whatever their key order, lists in order; `null` means "has none". */
  eq?: JsonValue;
  ne?: JsonValue;
  in?: FilterScalar[];
  nin?: FilterScalar[];
  /** Numbers with numbers, strings with strings (by code point), times with dates (RFC 3339 or `2024-01-15`). */
  gt?: number | string;
  gte?: number | string;
  lt?: number | string;
  lte?: number | string;
  /** A substring of a string, an element of a list; on `tags`, a tag or a list of tags all present. */
  contains?: FilterScalar | string[];
  exists?: boolean;
}

/** The fields a filter tests; `metadata.a.b` reaches key `b` of the object under `a` (`\.` is a dot in a key). */
export type FilterField =
  `metadata.${string}` | 'tags' | 'type' | 'timestamp' | 'created_at' | 'updated_at' | 'space' | 'document_id';

/** Conditions on fields: a bare value means `eq` (to compare with an object, write `{eq: {...}}`). */
export type FilterCondition = { [F in FilterField]?: string | number | boolean | null | JsonValue[] | FilterOperators };

/**
 * A filter expression of recall, reflect, listMemories and deleteMatching (docs/api.md, "Filters"), e.g.
 * `{and: [{'metadata.project': 'apollo'}, {'metadata.priority': {gte: 2}}, {not: {tags: {contains: 'draft'}}}]}`.
 */
export type Filter = { and: Filter[] } | { or: Filter[] } | { not: Filter } | FilterCondition;

/** The reflect answer, with the ids of the memories it is based on as its citations. */
export type ReflectResult = Ok<'reflectBank'>;

/** An event of a streamed reflect: a piece of the answer's text, then the whole result. */
export type ReflectStreamEvent = { type: 'delta'; text: string } | { type: 'done'; result: ReflectResult };

export interface UsageCounter {
  used: number;
  limit: number | null;
  [key: string]: unknown;
}

/** `GET /v1/me/usage` on a gateway: this month's usage against the project's quotas. */
export interface Usage {
  period: string;
  memories: UsageCounter;
  recalls: UsageCounter;
  reflects: UsageCounter;
  [key: string]: unknown;
}

/** An async retain's or an extraction's status, summed over its jobs. */
export type Operation = Ok<'getOperation'>;
