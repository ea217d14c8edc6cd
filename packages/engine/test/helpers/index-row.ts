import type { Memory } from '../../src/memory/types.js';
import type { VectorRowMeta } from '../../src/vectors/bank-vectors.js';

const now = new Date().toISOString();

/** A valid raw memory's bank index row in bank `b` of the default space, with `length` keyword terms. */
export function indexRow(id: string, length: number, text = id): VectorRowMeta {
  const memory: Memory = {
    id,
    bank_id: 'b',
    space: 'default',
    type: 'raw',
    text,
    context: null,
    metadata: {},
    tags: [],
    entities: [],
    document_id: null,
    source_id: null,
    occurred_at: null,
    created_at: now,
    updated_at: now,
    state: 'valid',
    superseded_by: null,
    valid_to: null,
    valid_from: new Date(0).toISOString(),
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
