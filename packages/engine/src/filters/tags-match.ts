/** Hindsight's tags_match modes (recall's `tags_match`). */
export type TagsMatch = 'any' | 'all' | 'any_strict' | 'all_strict' | 'exact';

/**
 * Hindsight's tags_match: whether a memory holding `have` passes the requested `tags` (`any` and `all` also match an
 * untagged memory).
 */
export function tagsPass(tags: readonly string[], have: readonly string[], mode: TagsMatch): boolean {
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
