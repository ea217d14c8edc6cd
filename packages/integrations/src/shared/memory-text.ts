import type { RecallHit } from '@mnemos/client';

/** One recalled memory as a line a model reads: the date it happened (when known), then the text. */
export function memoryLine(hit: Pick<RecallHit, 'text' | 'occurred_at'>): string {
  const date = hit.occurred_at ? `[${hit.occurred_at.slice(0, 10)}] ` : '';
  return `- ${date}${hit.text}`;
}

export const DEFAULT_MEMORY_HEADING = 'Relevant memories from earlier conversations (use them when they help):';

/** The recalled memories as one block of text for a prompt, or undefined when there are none. */
export function memoryBlock(
  hits: ReadonlyArray<Pick<RecallHit, 'text' | 'occurred_at'>>,
  heading = DEFAULT_MEMORY_HEADING,
): string | undefined {
  if (hits.length === 0) return undefined;
  return [heading, ...hits.map(memoryLine)].join('\n');
}
