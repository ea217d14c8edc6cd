import { findUnstorableText, pointerSegment } from '@mnemos/http-input';
import { invalidField as invalid } from '@mnemos/problems';
import type { Metadata } from '../memory/types.js';

/**
 * The bounds of one memory's metadata (docs/api.md, "Metadata"). Metadata is kept whole with every memory, read by
 * every filter that names it and answered with every hit, so it is bounded: room for the scopes, ids, counters and
 * small nested records an agent framework files with a memory, not for documents (those are the memory's text).
 * Eight levels let every path a filter can name (at most eight keys) reach the deepest value.
 */
export const METADATA_LIMITS = {
  /** Levels of objects and lists, the metadata object itself being the first. */
  depth: 8,
  /** Characters of one key, at any level. */
  keyChars: 256,
  /** Characters of one string value, at any level (what the string-only metadata allowed). */
  stringChars: 10_000,
  /** The whole metadata written as JSON, in UTF-8 bytes. */
  bytes: 65_536,
} as const;

/**
 * Checks a memory's metadata from the wire: any JSON under string keys, within METADATA_LIMITS; a string-only map (what
 * Hindsight clients send) is one case of it. Throws a 400 problem pointing at the first value out of bounds.
 */
export function checkMetadata(
  value: Readonly<Record<string, unknown>> | null | undefined,
  pointer: string,
): Metadata | undefined {
  if (value === undefined || value === null) return undefined;
  const unstorable = findUnstorableText(value);
  if (unstorable !== undefined) throw invalid(`${pointer}${unstorable.pointer}`, unstorable.detail);
  checkObject(value, pointer, 1);
  const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
  if (bytes > METADATA_LIMITS.bytes) {
    throw invalid(
      pointer,
      `is ${bytes} bytes as JSON; metadata must be at most ${METADATA_LIMITS.bytes} bytes (keep documents in the memory's text)`,
    );
  }
  return value as Metadata;
}

function checkObject(value: Readonly<Record<string, unknown>>, pointer: string, depth: number): void {
  for (const [key, child] of Object.entries(value)) {
    const at = `${pointer}/${pointerSegment(key)}`;
    if (key.length > METADATA_LIMITS.keyChars) {
      throw invalid(
        at,
        `is a key of ${key.length} characters; metadata keys must be at most ${METADATA_LIMITS.keyChars}`,
      );
    }
    checkValue(child, at, depth);
  }
}

function checkValue(value: unknown, pointer: string, depth: number): void {
  if (typeof value === 'string') {
    if (value.length > METADATA_LIMITS.stringChars) {
      throw invalid(pointer, `must NOT have more than ${METADATA_LIMITS.stringChars} characters`);
    }
    return;
  }
  // findUnstorableText (in checkMetadata) has refused the numbers past the double range.
  if (value === null || typeof value === 'boolean' || typeof value === 'number') return;
  if (depth >= METADATA_LIMITS.depth) {
    throw invalid(
      pointer,
      `nests metadata deeper than ${METADATA_LIMITS.depth} levels of objects and lists; flatten it (a filter path reaches ${METADATA_LIMITS.depth} keys)`,
    );
  }
  if (Array.isArray(value)) value.forEach((item, i) => checkValue(item, `${pointer}/${i}`, depth + 1));
  else if (typeof value === 'object') checkObject(value as Readonly<Record<string, unknown>>, pointer, depth + 1);
  else throw invalid(pointer, 'must be a JSON value');
}
