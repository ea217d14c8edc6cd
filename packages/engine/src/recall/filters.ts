import type { FilterAccessor } from '../filters/evaluate.js';
import { filterPredicate } from '../filters/evaluate.js';
import type { VectorRowMeta } from '../vectors/bank-vectors.js';
import type { RecallRequest } from './types.js';

/**
 * Hindsight's tags_match: whether a memory holding `have` passes the requested `tags` (`any` and `all` also match an
 * untagged memory).
 */
export function tagsPass(tags: readonly string[], have: readonly string[], mode: RecallRequest['tagsMatch']): boolean {
  const hasAny = tags.some((t) => have.includes(t));
  const hasAll = tags.every((t) => have.includes(t));
  switch (mode) {
    case 'any':
      return tags.length === 0 || have.length === 0 || hasAny;
    case 'all':
      return tags.length === 0 || have.length === 0 || hasAll;
    case 'any_strict':
      return hasAny;
    case 'all_strict':
      return hasAll;
    case 'exact':
      return hasAll && have.every((t) => tags.includes(t));
  }
}

/** How the filter language reads a row of the in-memory bank index (the memory there is opened). */
const META_ACCESSOR: FilterAccessor<VectorRowMeta> = {
  type: (m) => m.type,
  space: (m) => m.space,
  documentId: (m) => m.documentId,
  tags: (m) => m.tags,
  occurredAt: (m) => m.occurredAt,
  createdAt: (m) => Date.parse(m.memory.createdAt),
  updatedAt: (m) => Date.parse(m.memory.updatedAt),
  metadata: (m) => m.memory.metadata,
};

/**
 * Recall's filter over the in-memory bank index rows (the tenant and bank select the cache): space, valid state,
 * types, tags with Hindsight's tags_match semantics (tagsPass), and the request's filter expression.
 */
export function recallPredicate(r: RecallRequest): (m: VectorRowMeta) => boolean {
  const types = r.types !== undefined && r.types.length > 0 ? new Set(r.types) : undefined;
  const tags = r.tags;
  const expression = r.filter === undefined ? undefined : filterPredicate(r.filter, META_ACCESSOR);
  return (m) =>
    m.valid &&
    m.space === r.space &&
    (types === undefined || types.has(m.type)) &&
    (tags === undefined || tagsPass(tags, m.tags, r.tagsMatch)) &&
    (expression === undefined || expression(m));
}
