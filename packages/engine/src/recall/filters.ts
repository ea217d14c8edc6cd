import { tagsPass } from '../filters/tags-match.js';
import type { FilterAccessor } from '../filters/evaluate.js';
import { filterPredicate } from '../filters/evaluate.js';
import type { VectorRowMeta } from '../vectors/storage/indexed-row.js';
import type { RecallRequest } from './types.js';
import { validityOf, validityTest } from '../filters/validity.js';

/** How the filter language reads a row of the in-memory bank index (the memory there is opened). */
const META_ACCESSOR: FilterAccessor<VectorRowMeta> = {
  type: (m) => m.type,
  space: (m) => m.space,
  documentId: (m) => m.documentId,
  tags: (m) => m.tags,
  occurredAt: (m) => m.occurredAt,
  createdAt: (m) => Date.parse(m.memory.createdAt),
  updatedAt: (m) => Date.parse(m.memory.updatedAt),
  expiresAt: (m) => m.expiresAt,
  metadata: (m) => m.memory.metadata,
};

/**
 * Recall's filter over the in-memory bank index rows (the tenant and bank select the cache): space, valid state,
 * types, tags with Hindsight's tags_match semantics (tagsPass), and the request's filter expression.
 */
export function recallPredicate(r: RecallRequest): (m: VectorRowMeta) => boolean {
  const types = r.types !== undefined && r.types.length > 0 ? new Set(r.types) : undefined;
  const tags = r.tags;
  const validNow = validityTest(validityOf(r));
  const expression = r.filter === undefined ? undefined : filterPredicate(r.filter, META_ACCESSOR);
  return (m) =>
    m.valid &&
    m.space === r.space &&
    validNow(m.validFrom, m.validTo, m.expiresAt) &&
    (types === undefined || types.has(m.type)) &&
    (tags === undefined || tagsPass(tags, m.tags, r.tagsMatch)) &&
    (expression === undefined || expression(m));
}
