import type { Memory } from '../../src/memory/types.js';
import type { VectorRowMeta } from '../../src/vectors/storage/indexed-row.js';

const now = new Date().toISOString();

/** A valid raw memory's bank index row in bank `b` of the default space, with `length` keyword terms. */
export function indexRow(id: string, length: number, text = id): VectorRowMeta {
  const memory: Memory = {
    id,
    bankId: 'b',
    space: 'default',
    type: 'raw',
    text,
    context: null,
    metadata: {},
    tags: [],
    entities: [],
    documentId: null,
    sourceId: null,
    occurredAt: null,
    createdAt: now,
    updatedAt: now,
    state: 'valid',
    supersededBy: null,
    validFrom: new Date(0).toISOString(),
    validTo: null,
    expiresAt: null,
  };
  return {
    id,
    bankId: 'b',
    space: 'default',
    type: 'raw',
    valid: true,
    superseded: false,
    validFrom: 0,
    validTo: null,
    expiresAt: null,
    tags: [],
    batchId: null,
    seq: 0,
    documentId: null,
    occurredAt: null,
    length,
    tokenCount: 1,
    memory,
  };
}
