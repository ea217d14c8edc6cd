import type { RecallRequest } from './types.js';
import { validityOf, validityTest } from './validity.js';

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

/**
 * Recall's filter over the in-memory bank index rows (the tenant and bank select the cache): space, valid state,
 * types, and tags with Hindsight's tags_match semantics (tagsPass).
 */
export function recallPredicate(
  r: RecallRequest,
): (m: {
  space: string;
  valid: boolean;
  type: string;
  tags: string[];
  validFrom: number;
  validTo: number | null;
}) => boolean {
  const types = r.types !== undefined && r.types.length > 0 ? new Set(r.types) : undefined;
  const tags = r.tags;
  const validNow = validityTest(validityOf(r));
  return (m) =>
    m.valid &&
    m.space === r.space &&
    validNow(m.validFrom, m.validTo) &&
    (types === undefined || types.has(m.type)) &&
    (tags === undefined || tagsPass(tags, m.tags, r.tagsMatch));
}
