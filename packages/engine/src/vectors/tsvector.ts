/** One quoted lexeme of a tsvector's text form, with its optional position list: 'lex':1,4B */
const LEXEME = /'((?:[^']|'')*)'(?::([0-9A-D,]+))?/g;

/** A tsvector's text form (`'lex':1,4 'other':2`) as term counts and a length (total positions). */
export function parseTsvector(text: string): { terms: Map<string, number>; length: number } {
  const terms = new Map<string, number>();
  let length = 0;
  for (const m of text.matchAll(LEXEME)) {
    const count = m[2] ? m[2].split(',').length : 1;
    terms.set((m[1] ?? '').replace(/''/g, "'"), count);
    length += count;
  }
  return { terms, length };
}
