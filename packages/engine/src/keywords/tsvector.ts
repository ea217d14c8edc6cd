/** One quoted lexeme of a tsvector's or tsquery's text form, with its optional position list: 'lex':1,4B */
const LEXEME = /'((?:[^']|'')*)'(?::([0-9A-D,]+))?/g;

function unquote(lexeme: string | undefined): string {
  return (lexeme ?? '').replace(/''/g, "'");
}

/** A tsvector's text form (`'lex':1,4 'other':2`) as term counts and a length (total positions). */
export function parseTsvector(text: string): { terms: Map<string, number>; length: number } {
  const terms = new Map<string, number>();
  let length = 0;
  for (const m of text.matchAll(LEXEME)) {
    const count = m[2] ? m[2].split(',').length : 1;
    terms.set(unquote(m[1]), count);
    length += count;
  }
  return { terms, length };
}

/** The distinct terms of a tsquery's text form (`'a' | 'b' & !'c'`), negated terms included. */
export function tsqueryTerms(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(LEXEME)) out.add(unquote(m[1]));
  out.delete('');
  return [...out];
}
