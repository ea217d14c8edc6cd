// The memory browser's metadata and date fields turned into the engine's filter expression (docs/api.md "Filters").

export interface FilterFields {
  /** A metadata key; dots reach into nested objects, as in the filter language. */
  key: string;
  /** The value to match: a number or boolean when it reads as one, else the text as typed. */
  value: string;
  /** First day (YYYY-MM-DD, UTC) of `timestamp`, inclusive. */
  from: string;
  /** Last day (YYYY-MM-DD, UTC) of `timestamp`, inclusive. */
  to: string;
}

/**
 * A typed value: `3` and `true` compare as a number and a boolean, `"3"` (quoted) as the text 3, anything else as the
 * text itself.
 */
export function typedValue(text: string): string | number | boolean {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'number' || typeof parsed === 'boolean' || typeof parsed === 'string') return parsed;
  } catch {
    // Not JSON: plain text.
  }
  return text;
}

/** The filter as JSON text for the list's `filter` query parameter, or undefined when no field is set. */
export function filterExpression(fields: FilterFields): string | undefined {
  const conditions: Record<string, unknown>[] = [];
  const key = fields.key.trim();
  if (key !== '') {
    // A key without a value asks for memories that have the key at all.
    const test = fields.value === '' ? { exists: true } : typedValue(fields.value);
    conditions.push({ [`metadata.${key}`]: test });
  }
  const range: Record<string, string> = {};
  if (fields.from !== '') range['gte'] = fields.from;
  // The whole last day: times compare by the millisecond.
  if (fields.to !== '') range['lte'] = `${fields.to}T23:59:59.999Z`;
  if (Object.keys(range).length > 0) conditions.push({ timestamp: range });
  if (conditions.length === 0) return undefined;
  return JSON.stringify(conditions.length === 1 ? conditions[0] : { and: conditions });
}
