import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Envelope encryption primitives, all AES-256-GCM / HMAC-SHA-256 from node:crypto.
 *
 * - The master key (32 bytes, from MNEMOS_API_ENCRYPTION_MASTER_KEY) never encrypts data: HKDF derives a wrapping key
 *   and a fingerprint from it.
 * - Each bank has a random 32-byte data key with a random 16-byte key id. The data key is stored wrapped (GCM) by the
 *   master's wrapping key, with the tenant, bank and key id as associated data, in `banks.wrapped_key`. A wrapped blob
 *   may hold the data key wrapped under several masters at once (during an online rotation).
 * - HKDF derives three subkeys from a data key: `enc` (AES-GCM for memory bodies), `index` (HMAC for the blind
 *   keyword index and blind entity tokens), `hash` (HMAC for the retain dedup hash).
 */

export const KEY_BYTES = 32;
export const KEY_ID_BYTES = 16;
export const FINGERPRINT_BYTES = 8;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const WRAPPED_VERSION = 1;
const BODY_VERSION = 1;
/** One wrap inside a wrapped blob: fingerprint | iv | tag | ciphertext of the 32-byte data key. */
const WRAP_BYTES = FINGERPRINT_BYTES + IV_BYTES + TAG_BYTES + KEY_BYTES;

/** Data can't be decrypted: wrong key, tampered bytes, or a ciphertext moved from another row. */
export class IntegrityError extends Error {
  override readonly name = 'IntegrityError';
}

function hkdf(key: Buffer, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), info, KEY_BYTES));
}

export function gcmSeal(key: Buffer, plaintext: Buffer, aad: Buffer): { iv: Buffer; tag: Buffer; ct: Buffer } {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, tag: cipher.getAuthTag(), ct };
}

export function gcmOpen(key: Buffer, iv: Buffer, tag: Buffer, ct: Buffer, aad: Buffer): Buffer {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(aad);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ct), decipher.final()]);
  } catch {
    throw new IntegrityError('authentication failed');
  }
}

/** The master key's derived material. */
export class MasterKey {
  readonly fingerprint: Buffer;
  private readonly wrapKey: Buffer;

  constructor(raw: Buffer) {
    if (raw.length !== KEY_BYTES) throw new Error(`a master key must be ${KEY_BYTES} bytes, got ${raw.length}`);
    this.wrapKey = hkdf(raw, 'mnemos/v1/wrap');
    this.fingerprint = hkdf(raw, 'mnemos/v1/fingerprint').subarray(0, FINGERPRINT_BYTES);
  }

  get fingerprintHex(): string {
    return this.fingerprint.toString('hex');
  }

  /** A check value stored in the verification record: decrypts only under this master. */
  verificationCheck(): string {
    const { iv, tag, ct } = gcmSeal(this.wrapKey, Buffer.from(VERIFY_PLAINTEXT), Buffer.from('mnemos/v1/verify'));
    return Buffer.concat([iv, tag, ct]).toString('base64');
  }

  verifies(check: string): boolean {
    const b = Buffer.from(check, 'base64');
    if (b.length < IV_BYTES + TAG_BYTES) return false;
    try {
      const plain = gcmOpen(
        this.wrapKey,
        b.subarray(0, IV_BYTES),
        b.subarray(IV_BYTES, IV_BYTES + TAG_BYTES),
        b.subarray(IV_BYTES + TAG_BYTES),
        Buffer.from('mnemos/v1/verify'),
      );
      return plain.length === VERIFY_PLAINTEXT.length && timingSafeEqual(plain, Buffer.from(VERIFY_PLAINTEXT));
    } catch {
      return false;
    }
  }

  wrap(dataKey: Buffer, keyId: Buffer, tenant: string, bankId: string): Buffer {
    const { iv, tag, ct } = gcmSeal(this.wrapKey, dataKey, wrapAad(keyId, tenant, bankId));
    return Buffer.concat([this.fingerprint, iv, tag, ct]);
  }

  /** Unwraps this master's wrap in a blob; undefined when the blob has none for this master. */
  unwrap(blob: WrappedKey, tenant: string, bankId: string): Buffer | undefined {
    const wrap = blob.wraps.find((w) => w.subarray(0, FINGERPRINT_BYTES).equals(this.fingerprint));
    if (wrap === undefined) return undefined;
    let o = FINGERPRINT_BYTES;
    const iv = wrap.subarray(o, (o += IV_BYTES));
    const tag = wrap.subarray(o, (o += TAG_BYTES));
    return gcmOpen(this.wrapKey, iv, tag, wrap.subarray(o), wrapAad(blob.keyId, tenant, bankId));
  }
}

const VERIFY_PLAINTEXT = 'mnemos encryption key verification v1';

function wrapAad(keyId: Buffer, tenant: string, bankId: string): Buffer {
  return Buffer.concat([Buffer.from('mnemos/v1/dek\0'), keyId, Buffer.from(`\0${tenant}\0${bankId}`)]);
}

/** A bank's wrapped data key as stored: version | key id | count | wraps. */
export interface WrappedKey {
  keyId: Buffer;
  wraps: Buffer[];
}

export function encodeWrapped(w: WrappedKey): Buffer {
  return Buffer.concat([Buffer.from([WRAPPED_VERSION]), w.keyId, Buffer.from([w.wraps.length]), ...w.wraps]);
}

export function decodeWrapped(bytes: Uint8Array): WrappedKey {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = b[1 + KEY_ID_BYTES];
  if (b[0] !== WRAPPED_VERSION || count === undefined || b.length !== 2 + KEY_ID_BYTES + count * WRAP_BYTES) {
    throw new IntegrityError('malformed wrapped data key');
  }
  const wraps: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const start = 2 + KEY_ID_BYTES + i * WRAP_BYTES;
    wraps.push(b.subarray(start, start + WRAP_BYTES));
  }
  return { keyId: b.subarray(1, 1 + KEY_ID_BYTES), wraps };
}

/** A bank's unwrapped data key and its subkeys. */
export class DataKey {
  readonly keyIdHex: string;
  private readonly enc: Buffer;
  private readonly index: Buffer;
  private readonly hash: Buffer;

  constructor(
    readonly keyId: Buffer,
    raw: Buffer,
  ) {
    this.keyIdHex = keyId.toString('hex');
    this.enc = hkdf(raw, 'mnemos/v1/body');
    this.index = hkdf(raw, 'mnemos/v1/index');
    this.hash = hkdf(raw, 'mnemos/v1/dedup');
  }

  static generate(): { key: DataKey; raw: Buffer } {
    const raw = randomBytes(KEY_BYTES);
    return { key: new DataKey(randomBytes(KEY_ID_BYTES), raw), raw };
  }

  /** Body ciphertext: version | key id | iv | tag | ciphertext, with `aad` bound. */
  seal(plaintext: Buffer, aad: Buffer): Buffer {
    const { iv, tag, ct } = gcmSeal(this.enc, plaintext, aad);
    return Buffer.concat([Buffer.from([BODY_VERSION]), this.keyId, iv, tag, ct]);
  }

  open(sealed: Buffer, aad: Buffer): Buffer {
    const o = 1 + KEY_ID_BYTES;
    if (
      sealed.length < o + IV_BYTES + TAG_BYTES ||
      sealed[0] !== BODY_VERSION ||
      !sealed.subarray(1, o).equals(this.keyId)
    ) {
      throw new IntegrityError('ciphertext header does not match the bank key');
    }
    return gcmOpen(
      this.enc,
      sealed.subarray(o, o + IV_BYTES),
      sealed.subarray(o + IV_BYTES, o + IV_BYTES + TAG_BYTES),
      sealed.subarray(o + IV_BYTES + TAG_BYTES),
      aad,
    );
  }

  /** Blind token of a normalised term (32 hex characters: 128 bits of HMAC-SHA-256). */
  blind(domain: string, term: string): string {
    return createHmac('sha256', this.index).update(domain).update('\0').update(term).digest('hex').slice(0, 32);
  }

  /** Keyed dedup hash of content (given as its plain SHA-256 hex, which never leaves the process). */
  dedupHash(plainHash: string): string {
    return createHmac('sha256', this.hash).update(plainHash).digest('hex');
  }
}

/** The key id of a body ciphertext (to pick the data key), or undefined when the header is malformed. */
export function bodyKeyId(sealed: Uint8Array): string | undefined {
  if (sealed.length < 1 + KEY_ID_BYTES || sealed[0] !== BODY_VERSION) return undefined;
  return Buffer.from(sealed.buffer, sealed.byteOffset + 1, KEY_ID_BYTES).toString('hex');
}
