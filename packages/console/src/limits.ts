// The optional limits a key or OAuth client can carry (banks, spaces, expiry), parsed and checked before sending.
const ID = /^[A-Za-z0-9._:@+-]{1,256}$/;

/** Ids typed one per line or separated by commas. */
export function parseIds(text: string): string[] {
  return [
    ...new Set(
      text
        .split(/[\s,]+/)
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    ),
  ];
}

export function idsError(text: string, what: string): string | undefined {
  const bad = parseIds(text).find((id) => !ID.test(id));
  return bad === undefined
    ? undefined
    : `"${bad}" is not a valid ${what} id: use letters, digits and . _ : @ + - (at most 256).`;
}

/** An expiry date (YYYY-MM-DD, end of that day UTC) must lie in the future. */
export function expiryError(date: string, now: Date): string | undefined {
  if (date === '') return undefined;
  const at = expiryOf(date);
  if (at === undefined) return 'Enter the date as YYYY-MM-DD.';
  return at.getTime() <= now.getTime() ? 'Choose a date after today.' : undefined;
}

export function expiryOf(date: string): Date | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return undefined;
  const at = new Date(`${date}T23:59:59Z`);
  return Number.isNaN(at.getTime()) ? undefined : at;
}

/** The body fields for the limits that were filled in. */
export function limitsBody(banks: string, spaces: string, expiry: string): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (parseIds(banks).length > 0) body['banks'] = parseIds(banks);
  if (parseIds(spaces).length > 0) body['spaces'] = parseIds(spaces);
  const at = expiryOf(expiry);
  if (at !== undefined) body['expires_at'] = at.toISOString();
  return body;
}
