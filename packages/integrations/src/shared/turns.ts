/** Who said something in a conversation the adapters store. */
export type Speaker = 'user' | 'assistant';

const LABELS: Record<Speaker, string> = { user: 'User', assistant: 'Assistant' };

/**
 * A conversation turn as memory text: the speaker's label first, so a recalled "I prefer tea" says whose preference it
 * is, and the same words from the user and the assistant stay two memories.
 */
export function turnContent(speaker: Speaker, text: string): string {
  return `${LABELS[speaker]}: ${text}`;
}

/** The words of a turn stored by turnContent, without the speaker's label. */
export function turnText(speaker: Speaker, content: string): string {
  const label = `${LABELS[speaker]}: `;
  return content.startsWith(label) ? content.slice(label.length) : content;
}
