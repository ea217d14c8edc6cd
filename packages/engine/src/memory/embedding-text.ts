import type { NewMemory } from './types.js';

/** The text the embedding model sees for a memory. */
export function embeddingText(m: Pick<NewMemory, 'text'>): string {
  return m.text;
}
