import { ConfigError, loadEngineConfig } from '../config/load.js';
import type { Database, Transaction } from '../db/database.js';
import { openDatabase } from '../db/open.js';
import { enginesNotOnKey, STALE_AFTER_MS, type ConnectedEngine } from './connected-engines.js';
import type { BankCodec } from './codec.js';
import { EncryptingCodec } from './encrypting-codec.js';
import { decodeWrapped, encodeWrapped, MasterKey } from './envelope.js';
import { ENCRYPTION_LOCK, readRecord, writeRecord } from './record.js';
import { EncryptionKeyMismatchError, verifyMaster } from './setup.js';
import type { Metadata } from '../memory/types.js';
import { foldBankStatistics } from '../vectors/storage/statistics-folder.js';

/**
 * Key management commands (`mnemos rotate-key`, `mnemos encrypt-existing`). Both work on the database directly; see
 * docs/security.md for the procedures.
 */

export type RotationPhase = 'begin' | 'finish' | 'all';

export interface RotationOutcome {
  banks: number;
  phase: RotationPhase;
}

/**
 * A key change (a rotation, or encrypting a plaintext database) would leave connected engines serving with another key
 * or none; nothing was changed. Exit code 75 (EX_TEMPFAIL): run it again once those engines run with the new key.
 */
export class KeyChangeRefusedError extends Error {
  override readonly name = 'KeyChangeRefusedError';
  readonly exitCode = 75;
}

export interface RotationOptions {
  /** An engine whose heartbeat is older than this is taken for gone (crashed without removing its entry). */
  staleAfterMs?: number;
}

/**
 * Re-wraps every bank's data key under `next` without touching a memory body (the data keys do not change).
 * - `begin`: the database accepts both masters and every data key is wrapped under both; engines with either key
 *   keep serving (restart them one by one with the new key);
 * - `finish`: every data key is wrapped under `next` only (including banks an old-key engine created meanwhile) and
 *   the old master is no longer accepted;
 * - `all`: both at once, in one transaction (for a single engine, or the embedded database, which one process opens).
 *
 * `finish` and `all` refuse while a connected engine serves with another key than `next`: the banks it would create
 * afterwards would be wrapped under a master no engine started with the new key has. The check runs under the lock
 * every starting engine takes to verify its key, so an engine that starts meanwhile either is counted or is refused.
 */
export async function rotateKey(
  db: Database,
  currentRaw: Buffer,
  nextRaw: Buffer,
  phase: RotationPhase,
  options: RotationOptions = {},
): Promise<RotationOutcome> {
  const current = new MasterKey(currentRaw);
  const next = new MasterKey(nextRaw);
  const staleAfterMs = options.staleAfterMs ?? STALE_AFTER_MS;
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [ENCRYPTION_LOCK]);
    const record = await readRecord(tx);
    if (record === undefined) {
      throw new EncryptionKeyMismatchError(
        'This database is not encrypted: there is no key to rotate. Use `mnemos encrypt-existing` to encrypt it.',
      );
    }
    verifyMaster(record, current);
    if (phase !== 'begin') {
      const holdouts = await enginesNotOnKey(tx, next.fingerprintHex, staleAfterMs);
      if (holdouts.length > 0) throw new KeyChangeRefusedError(refusal(phase, holdouts, staleAfterMs));
    }
    const banks = await tx.query<{ tenant: string; bank_id: string; wrapped_key: Uint8Array }>(
      'SELECT tenant, bank_id, wrapped_key FROM banks WHERE wrapped_key IS NOT NULL FOR UPDATE',
    );
    for (const b of banks) {
      const blob = decodeWrapped(b.wrapped_key);
      const raw = next.unwrap(blob, b.tenant, b.bank_id) ?? current.unwrap(blob, b.tenant, b.bank_id);
      if (raw === undefined) {
        throw new EncryptionKeyMismatchError(
          `encryption_key_mismatch: the data key of bank ${JSON.stringify(b.bank_id)} (tenant ${b.tenant}) is wrapped under neither key; nothing was changed.`,
        );
      }
      const keyId = Buffer.from(blob.keyId);
      const wraps =
        phase === 'begin'
          ? [
              ...blob.wraps.filter((w) => !w.subarray(0, next.fingerprint.length).equals(next.fingerprint)),
              next.wrap(raw, keyId, b.tenant, b.bank_id),
            ]
          : [next.wrap(raw, keyId, b.tenant, b.bank_id)];
      await tx.query('UPDATE banks SET wrapped_key = $3 WHERE tenant = $1 AND bank_id = $2', [
        b.tenant,
        b.bank_id,
        encodeWrapped({ keyId, wraps }),
      ]);
    }
    const nextEntry = { fingerprint: next.fingerprintHex, check: next.verificationCheck() };
    const masters =
      phase === 'begin'
        ? [...record.masters.filter((m) => m.fingerprint !== next.fingerprintHex), nextEntry]
        : [nextEntry];
    await writeRecord(tx, { version: 1, masters });
    return { banks: banks.length, phase };
  });
}

/** The engines a refusal names, each with when it started and last said it was alive. */
function namedEngines(engines: readonly ConnectedEngine[]): string {
  return engines
    .map(
      (e) => `${e.host} pid ${e.pid} (started ${e.startedAt.toISOString()}, last heartbeat ${e.silentSeconds} s ago)`,
    )
    .join(', ');
}

/** How long a crashed engine keeps counting, for the end of a refusal. */
const crashedEngineNote = (staleAfterMs: number): string =>
  `An engine that stopped without saying so (a crash) counts until ${Math.round(staleAfterMs / 1000)} s after its ` +
  'last heartbeat.';

/** One line: which engines hold the old key, and how to go on. */
function refusal(phase: RotationPhase, engines: readonly ConnectedEngine[], staleAfterMs: number): string {
  const named = namedEngines(engines);
  const count = engines.length === 1 ? '1 engine still serves' : `${engines.length} engines still serve`;
  const next =
    phase === 'finish'
      ? 'restart them with MNEMOS_API_ENCRYPTION_MASTER_KEY set to the new key, then run `mnemos rotate-key --phase finish` again'
      : 'stop them first, or rotate without stopping: `mnemos rotate-key --phase begin`, restart each engine with ' +
        'MNEMOS_API_ENCRYPTION_MASTER_KEY set to the new key, then `mnemos rotate-key --phase finish`';
  return (
    `rotate-key refused (phase ${phase}): ${count} with a key other than the new one: ${named}; nothing was changed. ` +
    `To go on, ${next}. ${crashedEngineNote(staleAfterMs)}`
  );
}

export interface EncryptExistingOutcome {
  encrypted: number;
}

/** A row still in plaintext, of the bank whose data key seals it. */
interface PlainRow {
  tenant: string;
  bank_id: string;
}

/**
 * Seals plaintext rows in batches, each one transaction (so the command can be interrupted and run again), until a
 * batch finds fewer than `batchSize`: `select` locks up to `limit` rows still in plaintext, `seal` rewrites one of them
 * sealed under its bank's key. Answers how many rows it sealed.
 */
async function sealInBatches<Row extends PlainRow>(
  db: Database,
  codec: EncryptingCodec,
  batchSize: number,
  select: (tx: Transaction, limit: number) => Promise<Row[]>,
  seal: (tx: Transaction, bank: BankCodec, row: Row) => Promise<void>,
): Promise<number> {
  let sealed = 0;
  for (;;) {
    const done = await db.transaction(async (tx) => {
      const rows = await select(tx, Math.trunc(batchSize));
      for (const r of rows) await seal(tx, await codec.forWrite(tx, r.tenant, r.bank_id), r);
      return rows.length;
    });
    sealed += done;
    if (done < batchSize) return sealed;
  }
}

/**
 * Encrypts memories written before encryption was switched on. Only how the bodies are stored changes: no memory gets
 * a new version for it (migration 010).
 */
function encryptMemories(db: Database, codec: EncryptingCodec, batchSize: number): Promise<number> {
  return sealInBatches(
    db,
    codec,
    batchSize,
    async (tx, limit) => {
      const rows = await tx.query<
        PlainRow & {
          id: string;
          text: string | null;
          context: string | null;
          metadata: Metadata | null;
          entities: string[];
          content_hash: string;
        }
      >(
        `SELECT id, tenant, bank_id, text, context, metadata, entities, content_hash FROM memories
         WHERE body_enc IS NULL ORDER BY tenant, id LIMIT ${limit} FOR UPDATE`,
      );
      if (rows.length > 0) await tx.query("SELECT set_config('mnemos.history', 'skip', true)");
      return rows;
    },
    async (tx, bank, r) => {
      const sealed = await bank.seal(r.id, {
        text: r.text ?? '',
        context: r.context,
        metadata: r.metadata ?? {},
        entities: r.entities,
      });
      await tx.query(
        `UPDATE memories SET text = NULL, context = NULL, metadata = '{}'::jsonb, entities = $2::text[], body_enc = $3,
           fts = $4::tsvector, content_hash = $5 WHERE tenant = $6 AND id = $1`,
        [r.id, sealed.entities, sealed.bodyEnc, sealed.fts ?? '', bank.dedupHash(r.content_hash), r.tenant],
      );
    },
  );
}

/**
 * Encrypts the history versions written before encryption was switched on, each sealed under its memory's id, as the
 * memory's body is.
 */
function encryptHistory(db: Database, codec: EncryptingCodec, batchSize: number): Promise<number> {
  return sealInBatches(
    db,
    codec,
    batchSize,
    (tx, limit) =>
      tx.query<
        PlainRow & {
          memory_id: string;
          version: number;
          text: string;
          context: string | null;
          metadata: Metadata | null;
          entities: string[];
        }
      >(
        `SELECT tenant, bank_id, memory_id::text AS memory_id, version, text, context, metadata, entities
         FROM memory_history WHERE body_enc IS NULL AND text IS NOT NULL
         ORDER BY tenant, bank_id, memory_id, version LIMIT ${limit} FOR UPDATE`,
      ),
    async (tx, bank, r) => {
      const sealed = await bank.seal(r.memory_id, {
        text: r.text,
        context: r.context,
        metadata: r.metadata ?? {},
        entities: r.entities,
      });
      await tx.query(
        `UPDATE memory_history SET text = NULL, context = NULL, metadata = '{}'::jsonb, entities = $5::text[],
           body_enc = $6 WHERE tenant = $1 AND bank_id = $2 AND memory_id = $3::uuid AND version = $4`,
        [r.tenant, r.bank_id, r.memory_id, r.version, sealed.entities, sealed.bodyEnc],
      );
    },
  );
}

/**
 * Seals the entity names written before encryption was switched on: each row's key becomes the name's blind token and
 * its name ciphertext (migration 012).
 */
function encryptEntityNames(db: Database, codec: EncryptingCodec, batchSize: number): Promise<number> {
  return sealInBatches(
    db,
    codec,
    batchSize,
    (tx, limit) =>
      tx.query<PlainRow & { memory_id: string; key: string; kind: string; name: string; part: number }>(
        `SELECT tenant, bank_id, memory_id::text AS memory_id, key, kind, name, part FROM memory_entities
         WHERE name IS NOT NULL ORDER BY tenant, bank_id, key LIMIT ${limit} FOR UPDATE`,
      ),
    async (tx, bank, r) => {
      const sealed = bank.sealEntity(r.name);
      await tx.query(
        `DELETE FROM memory_entities WHERE tenant = $1 AND bank_id = $2 AND key = $3 AND memory_id = $4::uuid AND kind = $5`,
        [r.tenant, r.bank_id, r.key, r.memory_id, r.kind],
      );
      await tx.query(
        `INSERT INTO memory_entities (tenant, bank_id, memory_id, key, name, name_enc, kind, part)
         VALUES ($1, $2, $3::uuid, $4, NULL, $5, $6, $7) ON CONFLICT DO NOTHING`,
        [r.tenant, r.bank_id, r.memory_id, sealed.key, sealed.nameEnc, r.kind, r.part],
      );
    },
  );
}

/**
 * Encrypts memories, their history versions and entity names written before encryption was switched on, in batches
 * (each batch one transaction, so the command can be interrupted and run again), then compacts the tables so the old
 * plaintext row versions are gone from them.
 */
export async function encryptExisting(
  db: Database,
  masterRaw: Buffer,
  batchSize = 200,
  options: RotationOptions = {},
): Promise<EncryptExistingOutcome> {
  const master = new MasterKey(masterRaw);
  const staleAfterMs = options.staleAfterMs ?? STALE_AFTER_MS;
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [ENCRYPTION_LOCK]);
    // An engine serving without the key (or with another) would go on writing rows this pass leaves behind in plain
    // text, and fail on the rows it seals: the pass waits until every connected engine runs with the key.
    const holdouts = await enginesNotOnKey(tx, master.fingerprintHex, staleAfterMs);
    if (holdouts.length > 0) {
      const count = holdouts.length === 1 ? '1 engine serves' : `${holdouts.length} engines serve`;
      throw new KeyChangeRefusedError(
        `encrypt-existing refused: ${count} this database without the key: ${namedEngines(holdouts)}; nothing was ` +
          'changed. To go on, stop them, run `mnemos encrypt-existing` again, then start them with ' +
          `MNEMOS_API_ENCRYPTION_MASTER_KEY set. ${crashedEngineNote(staleAfterMs)}`,
      );
    }
    const record = await readRecord(tx);
    // The record goes first: an interrupted run leaves a database that refuses to start until it is finished.
    if (record === undefined) {
      await writeRecord(tx, {
        version: 1,
        masters: [{ fingerprint: master.fingerprintHex, check: master.verificationCheck() }],
      });
    } else {
      verifyMaster(record, master);
    }
  });
  const codec = new EncryptingCodec(master, () => undefined);
  const encrypted = await encryptMemories(db, codec, batchSize);
  const versions = await encryptHistory(db, codec, batchSize);
  const names = await encryptEntityNames(db, codec, batchSize);
  if (encrypted > 0 || versions > 0 || names > 0) {
    // Old row versions hold the plaintext until the table is rewritten (the memories, and the keyword statistics that
    // counted their words); so may old versions of pg_statistic rows (statistics gathered before migration 004), which
    // only a superuser may rewrite.
    await db.exec('VACUUM FULL memories');
    await db.exec('VACUUM FULL memory_history');
    await db.exec('VACUUM FULL memory_entities');
    // The deltas not folded yet name the plaintext words the encryption took away: folding deletes their totals.
    await foldBankStatistics(db, true);
    await db.exec('VACUUM FULL bank_statistics_deltas');
    await db.exec('VACUUM FULL bank_term_counts');
    await db.exec('VACUUM FULL pg_statistic').catch(() => undefined);
    await db.exec('CHECKPOINT').catch(() => undefined);
  }
  return { encrypted };
}

/** Parses a master key given on the command line or in the environment (the same rules as the engine's setting). */
export function parseMasterKey(value: string | undefined, name: string): Buffer {
  const v = value?.trim() ?? '';
  if (v === '') throw new ConfigError(`${name} is not set (generate one with: openssl rand -base64 32).`);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(v))
    throw new ConfigError(`${name} is not base64 (generate one with: openssl rand -base64 32).`);
  const key = Buffer.from(v, 'base64');
  if (key.length !== 32)
    throw new ConfigError(`${name} must decode to exactly 32 bytes (generate one with: openssl rand -base64 32).`);
  return key;
}

function flag(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  if (i >= 0) return argv[i + 1];
  const inline = argv.find((a) => a.startsWith(`${name}=`));
  return inline?.slice(name.length + 1);
}

async function openConfiguredDatabase(env: Record<string, string | undefined>): Promise<Database> {
  return (await openDatabase(loadEngineConfig(env))).db;
}

/**
 * `mnemos rotate-key [--phase begin|finish|all]`: the current key from --current-key or MNEMOS_API_ENCRYPTION_MASTER_KEY,
 * the new one from --new-key or MNEMOS_API_ENCRYPTION_NEW_MASTER_KEY.
 */
export async function rotateKeyCommand(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): Promise<number> {
  const current = parseMasterKey(
    flag(argv, '--current-key') ?? env.MNEMOS_API_ENCRYPTION_MASTER_KEY,
    'MNEMOS_API_ENCRYPTION_MASTER_KEY (or --current-key)',
  );
  const next = parseMasterKey(
    flag(argv, '--new-key') ?? env.MNEMOS_API_ENCRYPTION_NEW_MASTER_KEY,
    'MNEMOS_API_ENCRYPTION_NEW_MASTER_KEY (or --new-key)',
  );
  const phase = flag(argv, '--phase') ?? 'all';
  if (phase !== 'begin' && phase !== 'finish' && phase !== 'all')
    throw new ConfigError('--phase must be begin, finish or all.');
  const db = await openConfiguredDatabase({ ...env, MNEMOS_API_ENCRYPTION_MASTER_KEY: current.toString('base64') });
  try {
    const outcome = await rotateKey(db, current, next, phase);
    const then =
      phase === 'begin'
        ? 'both keys are accepted now: restart every engine with the new key, then run `mnemos rotate-key --phase finish`.'
        : 'start the engine with MNEMOS_API_ENCRYPTION_MASTER_KEY set to the new key.';
    console.log(`[mnemos] re-wrapped the data keys of ${outcome.banks} banks (phase ${phase}); ${then}`);
    return 0;
  } finally {
    await db.close();
  }
}

/** `mnemos encrypt-existing`: encrypts a database written before MNEMOS_API_ENCRYPTION_MASTER_KEY was set. */
export async function encryptExistingCommand(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): Promise<number> {
  const key = parseMasterKey(
    flag(argv, '--key') ?? env.MNEMOS_API_ENCRYPTION_MASTER_KEY,
    'MNEMOS_API_ENCRYPTION_MASTER_KEY',
  );
  const db = await openConfiguredDatabase({ ...env, MNEMOS_API_ENCRYPTION_MASTER_KEY: key.toString('base64') });
  try {
    const { encrypted } = await encryptExisting(db, key);
    console.log(
      `[mnemos] encrypted ${encrypted} memories; start the engine with MNEMOS_API_ENCRYPTION_MASTER_KEY set.`,
    );
    return 0;
  } finally {
    await db.close();
  }
}
