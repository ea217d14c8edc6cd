import type { TagsMatch } from '../filters/tags-match.js';
import type { Filter } from '../filters/ast.js';
import type { Memory } from '../memory/types.js';

export type { TagsMatch } from '../filters/tags-match.js';

export interface RecallRequest {
  tenant: string;
  bankId: string;
  space: string;
  query: string;
  maxTokens: number;
  /** Candidate pool per retrieval arm. */
  candidates: number;
  includeOrg: boolean;
  types: string[] | undefined;
  tags: string[] | undefined;
  tagsMatch: TagsMatch;
  /** The filter expression (docs/api.md, "Filters"): it narrows the candidates before ranking, on every tier. */
  filter?: Filter | undefined;
  queryTimestamp: Date;
  trace: boolean;
  /** Results less relevant than this (0 to 1, relevance.ts) are left out; none when absent. */
  minRelevance?: number | undefined;
  /** Answer the memories valid at this instant instead of the current ones (validity.ts). */
  asOf?: Date | undefined;
  /** Answer memories whose validity has ended too. */
  includeSuperseded?: boolean | undefined;
  /** The instant the recall is made at (the engine's clock): memories expired by then are left out. */
  now?: Date | undefined;
}

/** A recalled memory and what the recall found about it. */
export interface RecallHit {
  /**
   * The memory, shared with the bank index that holds it: never changed. When `truncated`, a copy whose text is the
   * memory's beginning, cut to the token budget.
   */
  memory: Memory;
  score: number;
  /** Each ranking signal's contribution, by signal name. */
  scores: Record<string, number>;
  /** Calibrated chance, 0 to 1, that the result is relevant (relevance.ts); never rises down the list. */
  relevance: number;
  /** The memory's text is cut to the caller's token budget. */
  truncated: boolean;
  /** Recalled from the space's org bank (include_org). */
  org: boolean;
}

export interface RecallTrace {
  /** Where the arms searched: the in-memory bank index, or the database's indexes (tier.ts). */
  tier: Tier;
  stages: Array<{ stage: string; ms: number; candidates?: number }>;
  total_ms: number;
}

export interface RecallOutcome {
  results: RecallHit[];
  tokens: number;
  trace?: RecallTrace;
}

/** Where a recall's arms search: the in-memory copy of the banks, their compact copies, or the database's indexes. */
export type Tier = 'memory' | 'compact' | 'postgres';
