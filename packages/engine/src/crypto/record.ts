import type { Queryable } from '../db/database.js';
import type { MasterKey } from './envelope.js';

/** The key-verification record in mnemos_meta: which masters this database accepts, each with a check value. */
export interface EncryptionRecord {
  version: 1;
  masters: Array<{ fingerprint: string; check: string }>;
}

const RECORD_KEY = 'encryption';
/**
 * Advisory lock around the verification record and the wrapped keys: taken exclusively by whoever rewrites them
 * (start, rotation, encrypt-existing), and shared by a writer that wraps a new bank's data key (it must wrap it under a
 * master the record still accepts).
 */
export const ENCRYPTION_LOCK = 0x6d6e656b;

export async function readRecord(q: Queryable): Promise<EncryptionRecord | undefined> {
  const rows = await q.query<{ value: EncryptionRecord }>('SELECT value FROM mnemos_meta WHERE key = $1', [RECORD_KEY]);
  return rows[0]?.value;
}

export async function writeRecord(q: Queryable, record: EncryptionRecord): Promise<void> {
  await q.query(
    `INSERT INTO mnemos_meta (key, value) VALUES ($1, $2::jsonb) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
    [RECORD_KEY, JSON.stringify(record)],
  );
}

/** True when the record lists this master and its check value decrypts under it. */
export function acceptsMaster(record: EncryptionRecord | undefined, master: MasterKey): boolean {
  const entry = record?.masters.find((m) => m.fingerprint === master.fingerprintHex);
  return entry !== undefined && master.verifies(entry.check);
}
