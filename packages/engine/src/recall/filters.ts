import { tagsPass } from '../filters/tags-match.js';
import type { RecallRequest } from './types.js';
import { validityOf, validityTest } from '../filters/validity.js';

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
