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
export type DeleteResult = Ok<'deleteMemory'>;
export type Budget = NonNullable<RecallRequest['budget']>;
/** A chat turn for retainMessages: `{role, content, name?, timestamp?}`. */
export type ChatMessage = NonNullable<RetainRequest['messages']>[number];

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
