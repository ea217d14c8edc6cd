import type { Filter } from '../filters/ast.js';
import type { RetainItem } from '../memory/retain.js';
import type { Memory, Metadata, Partition, Timestamp } from '../memory/types.js';
import type { RecallHit, RecallRequest, TagsMatch } from '../recall/types.js';
import type { Usage } from '../llm/types.js';
import type { Bank, BankChanges, BankStats, Disposition } from '../memory/bank-store.js';
import type { Operation } from '../jobs/operations.js';

/**
 * The memory service's own vocabulary: camelCase names, independent of any transport. The faces (HTTP, MCP, the CLI)
 * translate their wire shapes to and from these. A memory's dates are Timestamps (ISO text, memory/types.ts), the
 * form its answers write; other dates are `Date`s.
 */

export type {
  Bank,
  BankChanges,
  BankStats,
  Disposition,
  Memory,
  Operation,
  Partition,
  RecallHit,
  RetainItem,
  TagsMatch,
  Timestamp,
};
export type { StoredVersion as MemoryVersion } from '../memory/history-store.js';

export type Budget = 'low' | 'mid' | 'high' | number;

export interface RetainRequest {
  partition: Partition;
  items: RetainItem[];
  /** Store the items as a durable job and answer at once with its operation. */
  async: boolean;
  /** Most new memories the call may store (a quota-holding gateway sets it). */
  maxNewMemories: number | undefined;
}

export type RetainResult =
  | {
      async: false;
      itemsCount: number;
      memoryIds: string[];
      /** New memories this call stored; content already present is not stored again. */
      storedCount: number;
      /** The operation that reports fact extraction started by this retain, if any. */
      operationId: string | undefined;
      /** What each item became, in order. */
      items: Array<{ memoryIds: string[]; storedCount: number }>;
    }
  | {
      async: true;
      itemsCount: number;
      operationId: string;
      /** The most new memories its job stores, counted when the call is bounded (maxNewMemories). */
      mostNew: number | undefined;
    };

/** A recall as the service takes it: the pipeline's request, with a budget instead of a candidate count. */
export type RecallQuery = Omit<RecallRequest, 'candidates'> & { budget: Budget };

export interface RecallResult {
  hits: RecallHit[];
  tokens: number;
  trace: { stages: Array<{ stage: string; ms: number; candidates?: number }>; totalMs: number } | undefined;
}

export interface ReflectRequest {
  tenant: string;
  bankId: string;
  space: string | undefined;
  query: string;
  /** Extra context the caller gives with the question. */
  context: string | undefined;
  budget: Budget;
  types: string[] | undefined;
  tags: string[] | undefined;
  tagsMatch: TagsMatch | undefined;
  /** The filter expression the recalled memories pass (docs/api.md, "Filters"). */
  filter?: Filter | undefined;
  queryTimestamp: Date | undefined;
  /** A JSON Schema the answer also fills in (`structuredOutput`). */
  responseSchema: Record<string, unknown> | undefined;
  /** Return the cited memories with the answer. */
  includeFacts: boolean;
  /** Answer from the memories valid at this instant instead of the current ones. */
  asOf?: Date | undefined;
  /** Answer from memories whose validity has ended too. */
  includeSuperseded?: boolean | undefined;
}

export interface ReflectResult {
  text: string;
  citations: string[];
  /** The cited memories, when asked for. */
  basedOn: RecallHit[] | undefined;
  structuredOutput: unknown;
  hasStructuredOutput: boolean;
  usage: Usage;
}

export interface MemoryListQuery {
  tenant: string;
  bankId: string;
  space: string | undefined;
  type: string | undefined;
  /** Words the text contains. */
  text: string | undefined;
  tags: string[] | undefined;
  since: Date | undefined;
  until: Date | undefined;
  documentId: string | undefined;
  state: 'valid' | 'invalidated' | undefined;
  /** The filter expression (docs/api.md, "Filters"). */
  filter?: Filter | undefined;
  limit: number;
  offset: number;
  /** A previous page's `nextCursor`: the page starts after it. */
  cursor: string | undefined;
  /** The memories valid at this instant instead of the current ones. */
  asOf?: Date | undefined;
  /** Memories whose validity has ended too. */
  includeSuperseded?: boolean | undefined;
}

/** A page's size and where it starts: after `cursor` when there is one, else `offset` rows from the top. */
export interface PageRequest {
  limit: number;
  offset: number;
  cursor: string | undefined;
}

export interface MemoryEdit {
  text?: string;
  context?: string | null;
  tags?: string[];
  metadata?: Metadata;
  state?: 'valid' | 'invalidated';
  occurredAt?: Date | null;
  /** When it became true; null: its date again (occurred_at, else its creation). */
  validFrom?: Date | null;
  /** When it stopped being true; null: current again (and superseded by nothing). */
  validTo?: Date | null;
  /** When it is forgotten, with the facts read from it; null: kept. */
  expiresAt?: Date | null;
}

/** What a bulk update sets on every memory it selects (POST .../memories/update `set`). */
export type MemorySet = Pick<MemoryEdit, 'metadata' | 'tags' | 'state' | 'expiresAt'>;

/** The memories a bulk update selects: by id, or by a filter expression. */
export type MemorySelection = { ids: readonly string[] } | { filter: Filter };

export interface Page<T> {
  items: T[];
  total: number;
  limit: number;
  offset: number;
  /** Where the next page starts, when this one is full (there may be more); null otherwise. */
  nextCursor: string | null;
}

/** How a streamed reflect hands on its answer while the LLM writes it. */
export interface ReflectStream {
  /** Called with each new piece of the answer's text, in order. */
  onDelta(text: string): void;
  /** Aborts the LLM call (the caller went away). */
  signal?: AbortSignal | undefined;
}
