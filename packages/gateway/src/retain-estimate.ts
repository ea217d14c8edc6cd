// How many memories a retain may become, estimated before forwarding so quota can be reserved for it. The engine cuts
// content longer than CHUNK_CHARS into pieces of at most that many characters, packing small paragraphs and sentences
// together; two neighbouring pieces together hold at least CHUNK_CHARS characters, hence the bound below. The engine
// enforces the reserved amount as a hard bound (and names the true count when it is higher), so a change of chunking
// in the engine can make this estimate short but never lets a retain store more than was reserved.
const CHUNK_CHARS = 1200;

/** Upper bound of the pieces one item's content becomes. */
export function piecesOf(content: string): number {
  const length = content.trim().length;
  if (length <= CHUNK_CHARS) return 1;
  return 4 + Math.ceil(length / (CHUNK_CHARS / 2 - 1));
}

const field = (value: unknown, name: string): unknown =>
  value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[name] : undefined;

/** The text the engine stores for a chat message: "speaker: content", the speaker being its name, else its role. */
function messageText(message: unknown): unknown {
  const content = field(message, 'content');
  if (typeof content !== 'string') return content;
  const name = field(message, 'name');
  const role = field(message, 'role');
  const speaker = typeof name === 'string' && name.trim() !== '' ? name : typeof role === 'string' ? role : '';
  return `${speaker}: ${content}`;
}

/** Upper bound of the memories a retain body (`content`, or `items` and/or `messages`) stores. */
export function estimateStored(body: Record<string, unknown>): number {
  const items = body['items'];
  const messages = body['messages'];
  const contents =
    Array.isArray(items) || Array.isArray(messages)
      ? [
          ...(Array.isArray(items) ? items.map((item) => field(item, 'content')) : []),
          ...(Array.isArray(messages) ? messages.map(messageText) : []),
        ]
      : [body['content']];
  return contents.reduce<number>((n, content) => n + (typeof content === 'string' ? piecesOf(content) : 1), 0);
}
