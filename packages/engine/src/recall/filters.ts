import type { SqlParam } from '../db/database.js';
import { ORG_BANK_ID } from '../memory/types.js';
import type { RecallRequest } from './types.js';

/**
 * The WHERE clause every recall arm shares: the (tenant, bank, space) partition, plus type and tag filters. Placeholders
 * start after `offset` existing parameters.
 */
export function recallWhere(r: RecallRequest, offset: number): { sql: string; params: SqlParam[] } {
  const params: SqlParam[] = [];
  const p = (value: SqlParam) => {
    params.push(value);
    return `$${offset + params.length}`;
  };
  const banks = r.includeOrg && r.bankId !== ORG_BANK_ID ? [r.bankId, ORG_BANK_ID] : [r.bankId];
  const clauses = [`tenant = ${p(r.tenant)}`, `bank_id = ANY(${p(banks)}::text[])`, `space = ${p(r.space)}`, `state = 'valid'`];
  if (r.types !== undefined && r.types.length > 0) clauses.push(`type = ANY(${p(r.types)}::text[])`);
  if (r.tags !== undefined) {
    const tags = p(r.tags);
    switch (r.tagsMatch) {
      case 'any':
        if (r.tags.length > 0) clauses.push(`(tags && ${tags}::text[] OR cardinality(tags) = 0)`);
        break;
      case 'all':
        if (r.tags.length > 0) clauses.push(`(tags @> ${tags}::text[] OR cardinality(tags) = 0)`);
        break;
      case 'any_strict':
        clauses.push(`tags && ${tags}::text[]`);
        break;
      case 'all_strict':
        clauses.push(`tags @> ${tags}::text[]`);
        break;
      case 'exact':
        clauses.push(`(tags @> ${tags}::text[] AND tags <@ ${tags}::text[])`);
        break;
    }
  }
  return { sql: clauses.join(' AND '), params };
}

/** Score factor for facts a later correction superseded: they stay recallable but rank below current facts (DESIGN 1). */
export const SUPERSEDED_FACTOR = 0.5;

/** Applies the supersession penalty to fused entries (in place) and re-sorts them; marks `scores.superseded`. */
export function demoteSuperseded(
  ordered: Array<[string, { score: number; scores: Record<string, number> }]>,
  memories: ReadonlyMap<string, { superseded_by: string | null }>,
): void {
  let changed = false;
  for (const [id, entry] of ordered) {
    if (memories.get(id)?.superseded_by) {
      entry.score *= SUPERSEDED_FACTOR;
      entry.scores['superseded'] = 1;
      changed = true;
    }
  }
  if (changed) ordered.sort((a, b) => b[1].score - a[1].score);
}

/** The same filter as recallWhere (minus the tenant and bank, which select the cache), for in-memory rows. */
export function recallPredicate(r: RecallRequest): (m: { space: string; valid: boolean; type: string; tags: string[] }) => boolean {
  const types = r.types !== undefined && r.types.length > 0 ? new Set(r.types) : undefined;
  const tags = r.tags;
  const tagTest = (have: string[]): boolean => {
    if (tags === undefined) return true;
    const hasAny = tags.some((t) => have.includes(t));
    const hasAll = tags.every((t) => have.includes(t));
    switch (r.tagsMatch) {
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
  };
  return (m) => m.valid && m.space === r.space && (types === undefined || types.has(m.type)) && tagTest(m.tags);
}
