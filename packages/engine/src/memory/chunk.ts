/**
 * Splits long content into pieces the embedding model can see whole (it reads ~256 word pieces). Cuts at paragraph,
 * then sentence, then word boundaries; short content stays one piece.
 */
export const MAX_CHUNK_CHARS = 1200;

export function chunkText(text: string, max = MAX_CHUNK_CHARS): string[] {
  if (text.length <= max) return [text];
  const units = text
    .split(/\n\s*\n/)
    .flatMap((para) => (para.length <= max ? [para] : para.split(/(?<=[.!?。！？])\s+/)))
    .flatMap((sentence) => (sentence.length <= max ? [sentence] : splitWords(sentence, max)));
  const chunks: string[] = [];
  let current = '';
  for (const unit of units) {
    const piece = unit.trim();
    if (piece === '') continue;
    if (current !== '' && current.length + 1 + piece.length > max) {
      chunks.push(current);
      current = '';
    }
    current = current === '' ? piece : `${current}\n${piece}`;
  }
  if (current !== '') chunks.push(current);
  return chunks;
}

function splitWords(text: string, max: number): string[] {
  const out: string[] = [];
  let current = '';
  for (const word of text.split(/\s+/)) {
    // A single "word" longer than max (no spaces, e.g. CJK text or a long token) is cut by characters.
    for (let i = 0; i < word.length; i += max) {
      const part = word.slice(i, i + max);
      if (current !== '' && current.length + 1 + part.length > max) {
        out.push(current);
        current = '';
      }
      current = current === '' ? part : `${current} ${part}`;
    }
  }
  if (current !== '') out.push(current);
  return out;
}
