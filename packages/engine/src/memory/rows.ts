import type { Queryable } from '../db/database.js';
import type { PlainBody } from '../crypto/codec.js';
import type { Memory, MemoryType, Metadata, Timestamp } from './types.js';

/** Columns read for a memory; `body_enc` is there for encryption at rest. */
export const MEMORY_COLUMNS = `id, bank_id, space, type, text, context, metadata, body_enc, tags, entities, document_id,
  source_id, occurred_at, created_at, updated_at, state, superseded_by, valid_to, expires_at,
  COALESCE(valid_from, occurred_at, created_at) AS valid_from`;

export interface MemoryRow {
  id: string;
  bank_id: string;
  space: string;
  type: string;
  text: string | null;
  context: string | null;
  metadata: Metadata | null;
  body_enc: Uint8Array | null;
  tags: string[];
  entities: string[];
  document_id: string | null;
  source_id: string | null;
  occurred_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
  state: string;
  superseded_by: string | null;
  valid_to: Date | string | null;
  expires_at: Date | string | null;
  valid_from: Date | string;
}

/** Opens stored rows as memories (decrypting bodies under encryption at rest); rows that fail to open are left out. */
export interface MemoryReader {
  open(q: Queryable, tenant: string, rows: readonly MemoryRow[]): Promise<Memory[]>;
}

/** A timestamp column as a Timestamp: drivers give a Date, rows read as JSON give Postgres's own text. */
function timestamp(value: Date | string): Timestamp {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

const maybeTimestamp = (value: Date | string | null): Timestamp | null => (value === null ? null : timestamp(value));

/**
 * A row as a memory: the one place a memory is read from its columns. `body` is the decrypted body from the codec;
 * without it the row must be plaintext: an encrypted row is never shown as an empty memory.
 */
export function rowToMemory(row: MemoryRow, body?: PlainBody): Memory {
  if (body === undefined && row.body_enc !== null) {
    throw new Error(`memory ${row.id} is encrypted: read it through the memory store (the body codec)`);
  }
  return {
    id: row.id,
    bankId: row.bank_id,
    space: row.space,
    type: row.type as MemoryType,
    text: body?.text ?? row.text ?? '',
    context: body ? body.context : row.context,
    metadata: body?.metadata ?? row.metadata ?? {},
    tags: row.tags,
    entities: body?.entities ?? row.entities,
    documentId: row.document_id,
    sourceId: row.source_id,
    occurredAt: maybeTimestamp(row.occurred_at),
    createdAt: timestamp(row.created_at),
    updatedAt: timestamp(row.updated_at),
    state: row.state === 'invalidated' ? 'invalidated' : 'valid',
    supersededBy: row.superseded_by,
    validFrom: timestamp(row.valid_from),
    validTo: maybeTimestamp(row.valid_to),
    expiresAt: maybeTimestamp(row.expires_at),
  };
}
