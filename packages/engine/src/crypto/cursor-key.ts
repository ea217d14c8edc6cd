import { randomBytes } from 'node:crypto';
import type { Queryable } from '../db/database.js';

const KEY_RECORD = 'list_cursor_key';
const KEY_BYTES = 32;

/**
 * The key that signs list cursors, kept in `mnemos_meta` so that every engine on the database (and an engine after a
 * restart) accepts the cursors any of them gave. `make` creates it when there is none yet; without it, a database
 * that has none answers null and nothing is written.
 */
export async function loadCursorKey(q: Queryable, make: boolean): Promise<Buffer | null> {
  if (make) {
    await q.query('INSERT INTO mnemos_meta (key, value) VALUES ($1, $2::jsonb) ON CONFLICT (key) DO NOTHING', [
      KEY_RECORD,
      JSON.stringify({ key: randomBytes(KEY_BYTES).toString('base64') }),
    ]);
  }
  const rows = await q.query<{ value: { key?: unknown } }>('SELECT value FROM mnemos_meta WHERE key = $1', [
    KEY_RECORD,
  ]);
  if (rows.length === 0) return null;
  const stored = rows[0]!.value.key;
  const key = typeof stored === 'string' ? Buffer.from(stored, 'base64') : Buffer.alloc(0);
  if (key.length !== KEY_BYTES) {
    throw new Error(
      `mnemos_meta row '${KEY_RECORD}' holds no usable key; delete the row and the engine makes a new one`,
    );
  }
  return key;
}
