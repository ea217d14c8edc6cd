import type { RowFilter } from '../src/vectors/storage/postgres-index.js';

/**
 * The filter of a recall that asks for nothing but the default space's current memories (current at the bench's
 * start): what the index and keyword benches search with, so they time the search and not a filter.
 */
export const CURRENT_DEFAULT_SPACE: RowFilter = {
  space: 'default',
  types: undefined,
  tags: undefined,
  tagsMatch: 'any',
  validity: { kind: 'current', now: new Date() },
};
