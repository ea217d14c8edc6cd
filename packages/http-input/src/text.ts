/** Where a string that cannot be stored sits (a JSON pointer into the checked value) and why it cannot be. */
export interface UnstorableText {
  pointer: string;
  detail: string;
}

const NUL_DETAIL = 'contains a NUL character (\\u0000), which cannot be stored; remove it';
const SURROGATE_DETAIL = 'contains a lone UTF-16 surrogate (not valid Unicode text); send well-formed UTF-8';
// JSON.parse reads a number past the double range (1e400) as Infinity, which JSON.stringify writes as null: a body
// forwarded or stored would silently carry something else than was sent.
const NON_FINITE_DETAIL = 'is a number beyond the double range (about 1.8e308 in size), which cannot be stored';

/** RFC 6901 escaping of one pointer segment. */
export function pointerSegment(key: string | number): string {
  return String(key).replace(/~/g, '~0').replace(/\//g, '~1');
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function problemWith(text: string): string | undefined {
  if (text.includes('\u0000')) return NUL_DETAIL;
  if (LONE_SURROGATE.test(text)) return SURROGATE_DETAIL;
  return undefined;
}

/** Whether PostgreSQL text can hold `text`: no NUL character, no unpaired surrogate. */
export const isStorableText = (text: string): boolean => problemWith(text) === undefined;

/**
 * Finds the first string (object key or value, at any depth) that PostgreSQL text cannot hold or that is not valid
 * Unicode, or the first number JSON cannot write back. Iterative, so a deep value cannot exhaust the stack.
 */
export function findUnstorableText(value: unknown): UnstorableText | undefined {
  const pending: Array<{ value: unknown; pointer: string }> = [{ value, pointer: '' }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value: current, pointer } = next;
    if (typeof current === 'string') {
      const detail = problemWith(current);
      if (detail !== undefined) return { pointer: pointer === '' ? '/' : pointer, detail };
    } else if (typeof current === 'number') {
      if (!Number.isFinite(current)) return { pointer: pointer === '' ? '/' : pointer, detail: NON_FINITE_DETAIL };
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) pending.push({ value: current[i], pointer: `${pointer}/${i}` });
    } else if (current !== null && typeof current === 'object') {
      const entries = Object.entries(current as Record<string, unknown>);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        const at = `${pointer}/${pointerSegment(key)}`;
        const keyDetail = problemWith(key);
        if (keyDetail !== undefined) return { pointer: at, detail: `is a key that ${keyDetail}` };
        pending.push({ value: child, pointer: at });
      }
    }
  }
  return undefined;
}
