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

/** A JSON value: what metadata holds under its keys, at any depth. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A memory's metadata: any JSON under string keys (the wire bounds its size and depth: wire/metadata.ts). */
export type Metadata = Record<string, JsonValue>;

/**
 * A UTC instant as ISO 8601 text with milliseconds, exactly as `Date.prototype.toISOString` writes it. Memories carry
 * their dates in this form: it is what every answer writes out, so a recalled memory's dates cost nothing to answer,
 * and text cannot be changed in place by whoever holds it (the bank indexes share each memory with every recall).
 */
export type Timestamp = string;

/**
 * A memory: what the engine stores, recalls and answers, read once from its row (rows.ts) and written out once by
 * the wire layer (wire/answers.ts). The faces (HTTP, MCP, the CLI) and the features (reflect, facts) all see this one
 * shape. A new column is a field here, a line in rows.ts and a line in wire/answers.ts.
 */
export interface Memory {
  readonly id: string;
  /** The org bank of a space is ORG_BANK_ID. */
  readonly bankId: string;
  readonly space: string;
  readonly type: MemoryType;
  readonly text: string;
  readonly context: string | null;
  readonly metadata: Metadata;
  readonly tags: string[];
  readonly entities: string[];
  readonly documentId: string | null;
  /** The memory a fact was extracted from; null for what was retained. */
  readonly sourceId: string | null;
  readonly occurredAt: Timestamp | null;
  readonly createdAt: Timestamp;
  readonly updatedAt: Timestamp;
  readonly state: 'valid' | 'invalidated';
  readonly supersededBy: string | null;
  /** When it became true: its own valid_from, else its date (occurred_at), else its creation. */
  readonly validFrom: Timestamp;
  readonly validTo: Timestamp | null;
  /** When it is forgotten: from then on no read answers it, and the expiry job deletes it. */
  readonly expiresAt: Timestamp | null;
}

/**
 * Where a memory came in: the call that stored it and its position there. Recall lifts a memory by its neighbours in
 * the same call, so an export carries the place and an import keeps it.
 */
export interface BatchPlace {
  batchId: string;
  seq: number;
}

/** A memory as an export reads it: the memory and its place in the call that stored it (none for older rows). */
export interface ExportedMemory {
  memory: Memory;
  place: BatchPlace | null;
}

/** One piece of content about to be stored (after chunking). */
export interface NewMemory {
  id: string;
  type: MemoryType;
  text: string;
  context: string | null;
  metadata: Metadata;
  tags: string[];
  entities: string[];
  documentId: string | null;
  sourceId: string | null;
  batchId: string;
  seq: number;
  contentHash: string;
  tokenCount: number;
  occurredAt: Date | null;
  /** When it is forgotten (a fact's is its source's); null: kept. */
  expiresAt: Date | null;
}
