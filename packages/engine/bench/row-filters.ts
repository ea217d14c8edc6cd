import type { RowFilter } from '../src/vectors/storage/postgres-index.js';

/** The Postgres tier's filter of a recall that asks for nothing but the default space's current memories. */
export const CURRENT_DEFAULT_SPACE: RowFilter = {
  space: 'default',
  types: undefined,
  tags: undefined,
  tagsMatch: 'any',
  validity: { kind: 'current' },
};
