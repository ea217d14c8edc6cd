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

/** Upper bound of the memories a retain body (`content` or `items`) stores. */
export function estimateStored(body: Record<string, unknown>): number {
  const items = body['items'];
  const contentOf = (item: unknown): unknown =>
    item !== null && typeof item === 'object' ? (item as Record<string, unknown>)['content'] : undefined;
  const contents = Array.isArray(items) ? items.map(contentOf) : [body['content']];
  return contents.reduce<number>((n, content) => n + (typeof content === 'string' ? piecesOf(content) : 1), 0);
}
