import type { Memory as StoredMemory } from '../memory/types.js';
import type { RecallHit } from '../recall/types.js';
import { storedDate } from './stored-dates.js';
import type { Memory, RecalledMemory } from './types.js';

const date = (iso: string | null): Date | null => (iso === null ? null : storedDate(iso));

/** A stored memory (as the store and recall read it) in the service's own terms. */
export function toMemory(m: StoredMemory): Memory {
  return {
    id: m.id,
    bankId: m.bank_id,
    space: m.space,
    type: m.type,
    text: m.text,
    context: m.context,
    metadata: m.metadata,
    tags: m.tags,
    entities: m.entities,
    documentId: m.document_id,
    sourceId: m.source_id,
    occurredAt: date(m.occurred_at),
    createdAt: storedDate(m.created_at),
    updatedAt: storedDate(m.updated_at),
    state: m.state,
    supersededBy: m.superseded_by,
    validFrom: storedDate(m.valid_from),
    validTo: date(m.valid_to),
  };
}

export function toRecalledMemory(h: RecallHit): RecalledMemory {
  // Added to the memory rather than spread into a new object: a recall converts up to 100 of them.
  return Object.assign(toMemory(h), {
    score: h.score,
    scores: h.scores,
    relevance: h.relevance,
    truncated: h.truncated === true,
    org: h.org === true,
  });
}
