import { DatabaseUnavailableError } from '../db/availability.js';
import type { Queryable } from '../db/database.js';
import { queryTerms } from '../keywords/text-search.js';
import {
  entityKeyOf,
  type BankCodec,
  type BodyCodec,
  type EncodedRow,
  type KeywordQuery,
  type PlainBody,
  type SealedBody,
  type StoredEntityName,
} from './codec.js';
import { bodyKeyId, DataKey, decodeWrapped, encodeWrapped, IntegrityError, type MasterKey } from './envelope.js';
import { documentLexemes, normaliseWord, queryLexemes } from './normalise.js';
import { acceptsMaster, ENCRYPTION_LOCK, readRecord } from './record.js';
import { eventLoopSlicer } from '../util/yield.js';
import type { Metadata } from '../memory/types.js';
import { errorMessage } from '../util/error-message.js';

/** A ciphertext that failed to decrypt: reported (logged, counted), never returned. */
export interface IntegrityFailure {
  tenant: string;
  bankId: string;
  memoryId: string;
  reason: string;
}

/** The master key cannot unwrap a bank's data key (a wrapped key written under another master). */
export class BankKeyError extends Error {
  override readonly name = 'BankKeyError';
}

/** Associated data of a memory body: a ciphertext moved to another row (or bank, or tenant) fails to decrypt. */
export function bodyAad(tenant: string, bankId: string, id: string): Buffer {
  return Buffer.from(`mnemos/v1/memory\0${tenant}\0${bankId}\0${id}`);
}

/** Associated data of a sealed entity name: bound to its bank and its blind token, so it cannot name another. */
function entityAad(tenant: string, bankId: string, token: string): Buffer {
  return Buffer.from(`mnemos/v1/entity\0${tenant}\0${bankId}\0${token}`);
}

const QUERY_KEY_TTL_MS = 5_000;

/** Lexemes keyed between two checks of the time spent by blindTsvector. */
const LEXEMES_PER_CHECK = 256;

/** Blind index domains: keyword terms and entity names never share tokens. */
const TERM = 't';
const ENTITY = 'e';

/** Encryption on: envelope encryption of bodies, blind keyword index, keyed dedup hash (docs/security.md). */
export class EncryptingCodec implements BodyCodec {
  readonly encrypted = true;
  /** Unwrapped data keys by tenant, bank and key id (a key id names one key forever, so entries never go stale). */
  private readonly keys = new Map<string, DataKey>();
  /**
   * Query-side bank keys for a few seconds, so a recall does not pay a lookup before its keyword arm. Only queries use
   * it (writes always read the stored key in their transaction, reads pick the key by the ciphertext's key id): at
   * worst, for QUERY_KEY_TTL_MS after a bank is deleted and re-created by another process, keyword search in it misses.
   */
  private readonly queryKeys = new Map<string, { key: DataKey | undefined; at: number }>();
  integrityFailures = 0;

  constructor(
    readonly master: MasterKey,
    private readonly report: (failure: IntegrityFailure) => void,
  ) {}

  async forWrite(q: Queryable, tenant: string, bankId: string): Promise<BankCodec> {
    const key = (await this.writeKey(q, tenant, bankId)) ?? (await this.createBankKey(q, tenant, bankId));
    return {
      seal: (id, body) => sealBody(key, tenant, bankId, id, body),
      dedupHash: (h) => key.dedupHash(h),
      sealEntity: (name) => {
        const token = key.blind(ENTITY, entityKeyOf(name));
        return { key: token, name: null, nameEnc: key.seal(Buffer.from(name), entityAad(tenant, bankId, token)) };
      },
    };
  }

  async entityKey(q: Queryable, tenant: string, bankId: string, name: string): Promise<string | undefined> {
    const key = await this.queryKey(q, tenant, bankId);
    return key?.blind(ENTITY, entityKeyOf(name));
  }

  async openEntityNames(
    q: Queryable,
    tenant: string,
    bankId: string,
    rows: readonly StoredEntityName[],
  ): Promise<Array<string | undefined>> {
    const sealed = rows.filter((r) => r.name_enc !== null);
    const key = sealed.length === 0 ? undefined : await this.bankKey(q, tenant, bankId).catch(() => undefined);
    return rows.map((r) => {
      if (r.name_enc === null) return r.name ?? undefined;
      try {
        if (key === undefined) throw new IntegrityError("the bank's data key is not available");
        const aad = entityAad(tenant, bankId, r.key);
        return key.open(Buffer.from(r.name_enc.buffer, r.name_enc.byteOffset, r.name_enc.byteLength), aad).toString();
      } catch {
        this.integrityFailures++;
        this.report({ tenant, bankId, memoryId: `entity ${r.key}`, reason: 'entity name failed to decrypt' });
        return undefined;
      }
    });
  }

  async dedupHashes(q: Queryable, tenant: string, bankId: string, plainHashes: string[]): Promise<Map<string, string>> {
    const key = await this.writeKey(q, tenant, bankId);
    return key === undefined ? new Map() : new Map(plainHashes.map((h) => [key.dedupHash(h), h]));
  }

  async openRows(q: Queryable, tenant: string, rows: readonly EncodedRow[]): Promise<Array<PlainBody | undefined>> {
    // Load each bank's key once for the rows whose key is not cached yet.
    const missing = new Set<string>();
    for (const r of rows) {
      const id = r.body_enc === null ? undefined : bodyKeyId(r.body_enc);
      if (id !== undefined && !this.keys.has(cacheKey(tenant, r.bank_id, id))) missing.add(r.bank_id);
    }
    const loadErrors = new Map<string, string>();
    for (const bankId of missing) {
      try {
        await this.bankKey(q, tenant, bankId);
      } catch (error) {
        loadErrors.set(bankId, errorMessage(error));
      }
    }
    return rows.map((r) => {
      if (r.body_enc === null) {
        // A row written before encryption was switched on (encrypt-existing not finished yet).
        return { text: r.text ?? '', context: r.context, metadata: r.metadata ?? {}, entities: r.entities };
      }
      const fail = (reason: string) => {
        this.integrityFailures++;
        this.report({ tenant, bankId: r.bank_id, memoryId: r.id, reason });
        return undefined;
      };
      const id = bodyKeyId(r.body_enc);
      if (id === undefined) {
        fail('malformed ciphertext header');
        return;
      }
      const key = this.keys.get(cacheKey(tenant, r.bank_id, id));
      if (key === undefined) {
        fail(loadErrors.get(r.bank_id) ?? "the bank's data key does not match the ciphertext");
        return;
      }
      try {
        const plain = key.open(
          Buffer.from(r.body_enc.buffer, r.body_enc.byteOffset, r.body_enc.byteLength),
          bodyAad(tenant, r.bank_id, r.id),
        );
        return parseBody(plain);
      } catch (error) {
        fail(
          error instanceof IntegrityError ? 'ciphertext failed authentication (tampered or moved)' : 'malformed body',
        );
        return;
      }
    });
  }

  async keywordQuery(
    q: Queryable,
    tenant: string,
    bankIds: readonly string[],
    query: string,
    mode: 'any' | 'all',
  ): Promise<KeywordQuery | undefined> {
    // The same words the plaintext path sends to to_tsquery, normalised like Postgres would, then blinded per bank.
    const lexemes = queryTerms(query)
      .map((w) => normaliseWord(w))
      .filter((l): l is string => l !== undefined && l !== '');
    if (lexemes.length === 0) return undefined;
    const groups: string[] = [];
    for (const bankId of new Set(bankIds)) {
      const key = await this.queryKey(q, tenant, bankId);
      if (key === undefined) continue;
      const tokens = [...new Set(lexemes.map((l) => `'${key.blind(TERM, l)}'`))];
      groups.push(mode === 'any' ? tokens.join(' | ') : `(${tokens.join(' & ')})`);
    }
    if (groups.length === 0) return undefined;
    return { sql: (p) => `${p}::tsquery`, value: groups.join(' | ') };
  }

  async indexTerms(q: Queryable, tenant: string, bankIds: readonly string[], query: string): Promise<string[]> {
    // The blind index holds keyed tokens of the lexemes this engine computes itself: no database round trip.
    const lexemes = queryLexemes(query);
    const out = new Set<string>();
    for (const bankId of new Set(bankIds)) {
      const key = await this.queryKey(q, tenant, bankId);
      if (key !== undefined) for (const l of lexemes) out.add(key.blind(TERM, l));
    }
    return [...out].slice(0, 64);
  }

  private async queryKey(q: Queryable, tenant: string, bankId: string): Promise<DataKey | undefined> {
    const id = `${tenant}\0${bankId}`;
    const hit = this.queryKeys.get(id);
    const now = Date.now();
    if (hit !== undefined && now - hit.at < QUERY_KEY_TTL_MS) return hit.key;
    // A bank whose key this master cannot unwrap (created by an engine on the other key of a rotation under way) has
    // no rows this engine can open either: its keyword arm finds nothing rather than failing the whole query.
    const key = await this.bankKey(q, tenant, bankId).catch((error: unknown) => {
      if (error instanceof BankKeyError) return undefined;
      throw error;
    });
    // A bank without a key yet is not cached: its first retain must become searchable at once.
    if (key !== undefined) {
      if (this.queryKeys.size > 10_000) this.queryKeys.clear();
      this.queryKeys.set(id, { key, at: now });
    }
    return key;
  }

  /**
   * The bank's data key for a write, or undefined when the bank has none yet. Between the phases of a rotation, a
   * bank an engine on the other master created is wrapped under that master only: a temporary refusal, not a failure.
   */
  private async writeKey(q: Queryable, tenant: string, bankId: string): Promise<DataKey | undefined> {
    try {
      return await this.bankKey(q, tenant, bankId);
    } catch (error) {
      if (!(error instanceof BankKeyError)) throw error;
      throw new DatabaseUnavailableError(
        'encryption_key',
        new Error(
          `${error.message} (an engine on the other key of a rotation under way created it); retry through an ` +
            'engine on that key, or once `mnemos rotate-key --phase finish` has re-wrapped it',
        ),
      );
    }
  }

  /** The bank's data key, or undefined when the bank has none yet. */
  async bankKey(q: Queryable, tenant: string, bankId: string): Promise<DataKey | undefined> {
    const rows = await q.query<{ wrapped_key: Uint8Array | null }>(
      'SELECT wrapped_key FROM banks WHERE tenant = $1 AND bank_id = $2',
      [tenant, bankId],
    );
    const wrapped = rows[0]?.wrapped_key;
    return wrapped ? this.unwrap(wrapped, tenant, bankId) : undefined;
  }

  private unwrap(wrapped: Uint8Array, tenant: string, bankId: string): DataKey {
    const blob = decodeWrapped(wrapped);
    const id = cacheKey(tenant, bankId, blob.keyId.toString('hex'));
    const cached = this.keys.get(id);
    if (cached) return cached;
    const raw = this.master.unwrap(blob, tenant, bankId);
    if (raw === undefined) {
      throw new BankKeyError(`the data key of bank ${JSON.stringify(bankId)} is not wrapped under this master key`);
    }
    const key = new DataKey(Buffer.from(blob.keyId), raw);
    this.keys.set(id, key);
    return key;
  }

  /**
   * Creates the bank's data key in the caller's transaction (with the bank row if needed). Two writers racing on a
   * new bank agree: the first wrapped key stored wins and the other reads it back.
   *
   * The new key is wrapped under this engine's master only, so that master must still be one the database accepts:
   * after `mnemos rotate-key` replaced it, no engine started with the new key could read the bank, and the write would
   * be acknowledged yet unreadable. The shared lock orders this against a rotation, which holds it exclusively while it
   * re-wraps the keys and rewrites the record: either the rotation sees this bank, or this sees the new record.
   */
  private async createBankKey(q: Queryable, tenant: string, bankId: string): Promise<DataKey> {
    await q.query('SELECT pg_advisory_xact_lock_shared($1)', [ENCRYPTION_LOCK]);
    if (!acceptsMaster(await readRecord(q), this.master)) {
      throw new DatabaseUnavailableError(
        'encryption_key',
        new Error(
          `this engine's encryption key is no longer accepted by the database (\`mnemos rotate-key\` replaced it), ` +
            `so it cannot create the data key of bank ${JSON.stringify(bankId)}; retry through an engine started ` +
            'with the new key, and restart this one with MNEMOS_API_ENCRYPTION_MASTER_KEY set to it',
        ),
      );
    }
    const { key, raw } = DataKey.generate();
    const wrapped = encodeWrapped({ keyId: key.keyId, wraps: [this.master.wrap(raw, key.keyId, tenant, bankId)] });
    const rows = await q.query<{ wrapped_key: Uint8Array }>(
      `INSERT INTO banks (tenant, bank_id, name, wrapped_key) VALUES ($1, $2, $2, $3)
       ON CONFLICT (tenant, bank_id) DO UPDATE SET wrapped_key = COALESCE(banks.wrapped_key, EXCLUDED.wrapped_key)
       RETURNING wrapped_key`,
      [tenant, bankId, wrapped],
    );
    return this.unwrap(rows[0]!.wrapped_key, tenant, bankId);
  }
}

function cacheKey(tenant: string, bankId: string, keyIdHex: string): string {
  return `${tenant}\0${bankId}\0${keyIdHex}`;
}

export async function sealBody(
  key: DataKey,
  tenant: string,
  bankId: string,
  id: string,
  body: PlainBody,
): Promise<SealedBody> {
  const plain = Buffer.from(JSON.stringify({ t: body.text, c: body.context, m: body.metadata, e: body.entities }));
  return {
    text: null,
    context: null,
    metadata: {},
    entities: body.entities.map((e) => key.blind(ENTITY, entityKeyOf(e))),
    bodyEnc: key.seal(plain, bodyAad(tenant, bankId, id)),
    fts: await blindTsvector(key, body.text),
  };
}

/**
 * The blind index of a text as a tsvector literal: `'<token>':1,5 '<token>':2`. Keying a long text's lexemes yields
 * to the event loop every few milliseconds, like normalising them.
 */
export async function blindTsvector(key: DataKey, text: string): Promise<string> {
  const pause = eventLoopSlicer();
  const parts: string[] = [];
  for (const [lexeme, positions] of await documentLexemes(text)) {
    parts.push(`'${key.blind(TERM, lexeme)}':${positions.join(',')}`);
    if (parts.length % LEXEMES_PER_CHECK === 0) await pause();
  }
  return parts.join(' ');
}

function parseBody(plain: Buffer): PlainBody {
  const v = JSON.parse(plain.toString('utf8')) as { t?: unknown; c?: unknown; m?: unknown; e?: unknown };
  if (typeof v.t !== 'string') throw new Error('malformed body');
  return {
    text: v.t,
    context: typeof v.c === 'string' ? v.c : null,
    metadata: typeof v.m === 'object' && v.m !== null ? (v.m as Metadata) : {},
    entities: Array.isArray(v.e) ? v.e.filter((x): x is string => typeof x === 'string') : [],
  };
}
