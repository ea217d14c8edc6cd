/** The partition every memory belongs to; every query filters on all three. */
export interface Partition {
  tenant: string;
  bankId: string;
  space: string;
}

/** The org bank of a space is stored under this bank id, which no user bank can have (ids are 1-256 chars). */
export const ORG_BANK_ID = '';
export const DEFAULT_SPACE = 'default';

export const MEMORY_TYPES = [
  'raw',
  'world',
  'experience',
  'opinion',
  'observation',
  'procedure',
  'preference',
  'correction',
] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

/** A memory as the API shows it. */
export interface Memory {
  id: string;
  bank_id: string;
  space: string;
  type: MemoryType;
  text: string;
  context: string | null;
  metadata: Record<string, string>;
  tags: string[];
  entities: string[];
  document_id: string | null;
  source_id: string | null;
  occurred_at: string | null;
  created_at: string;
  updated_at: string;
  state: 'valid' | 'invalidated';
  superseded_by: string | null;
  /** When it became true: its own valid_from, else its date (occurred_at), else its creation. */
  valid_from: string;
  valid_to: string | null;
}

/** One piece of content about to be stored (after chunking). */
export interface NewMemory {
  id: string;
  type: MemoryType;
  text: string;
  context: string | null;
  metadata: Record<string, string>;
  tags: string[];
  entities: string[];
  documentId: string | null;
  sourceId: string | null;
  batchId: string;
  seq: number;
  contentHash: string;
  tokenCount: number;
  occurredAt: Date | null;
}
