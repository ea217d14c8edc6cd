/** One quoted lexeme of a tsvector's or tsquery's text form, with its optional position list: 'lex':1,4B */
const LEXEME = /'((?:[^']|'')*)'(?::([0-9A-D,]+))?/g;

function unquote(lexeme: string | undefined): string {
  return (lexeme ?? '').replace(/''/g, "'");
}

/** A tsvector's text form (`'lex':1,4 'other':2`) as term counts and a length (total positions). */
export function parseTsvector(text: string): { terms: Map<string, number>; length: number } {
  // A bank's load parses every memory's tsvector: a scan of character codes is several times faster than the
  // regular expression, which stays for text the database would not write (an unclosed quote).
  return scanTsvector(text) ?? parseTsvectorByPattern(text);
}

const QUOTE = 0x27;
const COLON = 0x3a;
const COMMA = 0x2c;

/** Whether `code` may appear in a position list (digits, the weights A-D, commas): LEXEME's `[0-9A-D,]`. */
function positionCode(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x44) || code === COMMA;
}

/** parseTsvector for well-formed text; undefined when a quote is left open. */
function scanTsvector(text: string): { terms: Map<string, number>; length: number } | undefined {
  const terms = new Map<string, number>();
  let length = 0;
  const end = text.length;
  let i = text.indexOf("'");
  while (i >= 0) {
    const start = i + 1;
    let escaped = false;
    let j = start;
    for (;;) {
      if (j >= end) return undefined;
      if (text.charCodeAt(j) === QUOTE) {
        if (text.charCodeAt(j + 1) !== QUOTE) break;
        escaped = true;
        j += 2;
      } else j++;
    }
    const lexeme = escaped ? unquote(text.slice(start, j)) : text.slice(start, j);
    let k = j + 1;
    let count = 1;
    if (text.charCodeAt(k) === COLON && positionCode(text.charCodeAt(k + 1))) {
      for (k++; k < end && positionCode(text.charCodeAt(k)); k++) if (text.charCodeAt(k) === COMMA) count++;
    }
    terms.set(lexeme, count);
    length += count;
    i = text.indexOf("'", k);
  }
  return { terms, length };
}

/** parseTsvector by LEXEME, for any text. */
export function parseTsvectorByPattern(text: string): { terms: Map<string, number>; length: number } {
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
