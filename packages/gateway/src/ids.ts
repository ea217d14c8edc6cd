// Identifiers and secrets: random ids, API keys (mnm_live_ + base62 of 32 random bytes), hashing, constant-time compare.
import { createHash, randomBytes, timingSafeEqual, scrypt as scryptCb } from 'node:crypto';
import { promisify } from 'node:util';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BASE36 = '0123456789abcdefghijklmnopqrstuvwxyz';

/** Unbiased random string over an alphabet (rejection sampling). */
export function randomString(length: number, alphabet: string = BASE62): string {
  const out: string[] = [];
  const limit = 256 - (256 % alphabet.length);
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < limit) out.push(alphabet[b % alphabet.length] ?? '');
      if (out.length === length) break;
    }
  }
  return out.join('');
}

/** Base62 encoding of bytes (big-endian), fixed width for a given byte count. */
export function base62(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString('hex') || '0'}`);
  const width = Math.ceil((bytes.length * 8) / Math.log2(62));
  const chars: string[] = [];
  while (n > 0n) {
    chars.push(BASE62[Number(n % 62n)] ?? '');
    n /= 62n;
  }
  while (chars.length < width) chars.push('0');
  return chars.reverse().join('');
}

export const KEY_PREFIX = 'mnm_live_';
/** 32 random bytes in base62 is 43 characters. */
const KEY_SECRET_LENGTH = 43;
const KEY_RE = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${KEY_SECRET_LENGTH}}$`);

export function newId(kind: 'acc' | 'prj' | 'key' | 'cli'): string {
  // Lower-case base36 so project ids are valid engine tenant ids ([a-z0-9_-]{1,64}).
  return `${kind}_${randomString(20, BASE36)}`;
}

export interface NewApiKey {
  key: string;
  /** Public, displayable, unique: `mnm_live_` + the first 8 characters of the secret. */
  prefix: string;
  hash: Buffer;
}

export function newApiKey(): NewApiKey {
  const key = KEY_PREFIX + base62(randomBytes(32));
  return { key, prefix: keyPrefix(key), hash: hashSecret(key) };
}

export function isWellFormedKey(key: string): boolean {
  return KEY_RE.test(key);
}

export function keyPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + 8);
}

/** The key secret has 190 bits of entropy, so one SHA-256 is a sound stored hash (no stretching needed). */
export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

export function constantTimeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

export function constantTimeEqualString(a: string, b: string): boolean {
  return constantTimeEqual(hashSecret(a), hashSecret(b));
}

const scrypt = promisify(scryptCb) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;

/** Account passwords: scrypt with a random salt, stored as `scrypt$<salt b64>$<hash b64>`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, 32);
  return `scrypt$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parts = (stored ?? '').split('$');
  const salt = Buffer.from(parts[1] ?? 'AAAA', 'base64');
  const expected = Buffer.from(parts[2] ?? '', 'base64');
  const actual = await scrypt(password, salt, 32);
  return parts[0] === 'scrypt' && constantTimeEqual(actual, expected);
}
