import type { Database, Queryable } from '../db/database.js';
import { plaintextCodec, type BodyCodec } from './codec.js';
import { EncryptingCodec, type IntegrityFailure } from './encrypting-codec.js';
import { MasterKey } from './envelope.js';
import { acceptsMaster, ENCRYPTION_LOCK, readRecord, writeRecord, type EncryptionRecord } from './record.js';

/**
 * The master key does not match the database. The message starts with the stable code. Exit code 78 (EX_CONFIG): the
 * setting is wrong, and restarting with it fails the same way.
 */
export class EncryptionKeyMismatchError extends Error {
  override readonly name = 'EncryptionKeyMismatchError';
  readonly code = 'encryption_key_mismatch';
  readonly exitCode = 78;
}

/**
 * The database and the engine disagree on whether encryption is on; the message says how to fix it. Exit code 78, like
 * a wrong key: the key setting or the database has to change before a start can succeed.
 */
export class EncryptionStateError extends Error {
  override readonly name = 'EncryptionStateError';
  readonly exitCode = 78;
}

/** Throws encryption_key_mismatch unless the record accepts this master. */
export function verifyMaster(record: EncryptionRecord, master: MasterKey): void {
  if (!acceptsMaster(record, master)) {
    throw new EncryptionKeyMismatchError(
      'encryption_key_mismatch: MNEMOS_API_ENCRYPTION_MASTER_KEY is not the key this database was encrypted with; ' +
        'start with the original key (after a rotation, the new one), or point MNEMOS_HOME / MNEMOS_API_DATABASE_URL at another database.',
    );
  }
}

export async function countPlaintextMemories(q: Queryable): Promise<number> {
  const [row] = await q.query<{ n: number | string }>('SELECT count(*) AS n FROM memories WHERE body_enc IS NULL');
  return Number(row?.n ?? 0);
}

/**
 * Start-up: the codec for this database and key.
 * - no key, no record: plaintext (encryption is a no-op);
 * - no key, a record: refused, the database is encrypted;
 * - a key, a record: the key must verify against it (else encryption_key_mismatch), and no plaintext row may be left;
 * - a key, no record: a fresh database gets the record; one that holds plaintext memories is refused with the
 *   `mnemos encrypt-existing` instruction.
 */
export async function openBodyCodec(
  db: Database,
  masterKey: Buffer | undefined,
  report: (failure: IntegrityFailure) => void,
): Promise<BodyCodec> {
  const record = await readRecord(db);
  if (masterKey === undefined) {
    if (record !== undefined) {
      throw new EncryptionStateError(
        'This database is encrypted at rest but MNEMOS_API_ENCRYPTION_MASTER_KEY is not set; set it to the key the database was encrypted with.',
      );
    }
    return plaintextCodec;
  }
  const master = new MasterKey(masterKey);
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [ENCRYPTION_LOCK]);
    const current = await readRecord(tx);
    if (current !== undefined) {
      verifyMaster(current, master);
    } else {
      if ((await countPlaintextMemories(tx)) > 0) {
        throw new EncryptionStateError(
          'MNEMOS_API_ENCRYPTION_MASTER_KEY is set but this database holds memories stored without encryption; ' +
            'run `mnemos encrypt-existing` once with the key set to encrypt them, then start again (or unset the key).',
        );
      }
      await writeRecord(tx, {
        version: 1,
        masters: [{ fingerprint: master.fingerprintHex, check: master.verificationCheck() }],
      });
    }
  });
  const left = record === undefined ? 0 : await countPlaintextMemories(db);
  if (left > 0) {
    throw new EncryptionStateError(
      `This database has ${left} memories not yet encrypted (an interrupted \`mnemos encrypt-existing\`); run \`mnemos encrypt-existing\` again with the key set, then start.`,
    );
  }
  return new EncryptingCodec(master, report);
}
