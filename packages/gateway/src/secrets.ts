// Gateway-wide secrets, generated on first start and kept in the control plane so every gateway instance shares them:
// the OAuth signing key (JWKS), cookie keys, and the key that derives project OAuth client secrets.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { JWK } from 'oidc-provider';
import type { Pool } from './db.js';

export interface GatewaySecrets {
  jwks: { keys: JWK[] };
  cookieKeys: string[];
  clientSecretKey: Buffer;
}

async function getOrCreate<T>(pool: Pool, name: string, make: () => T): Promise<T> {
  await pool.query('INSERT INTO gateway_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
    name,
    JSON.stringify(make()),
  ]);
  const res = await pool.query<{ value: T }>('SELECT value FROM gateway_secrets WHERE name = $1', [name]);
  const row = res.rows[0];
  if (row === undefined) throw new Error(`gateway secret ${name} is missing`);
  return row.value;
}

export async function loadSecrets(pool: Pool): Promise<GatewaySecrets> {
  const jwks = await getOrCreate(pool, 'jwks', () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = privateKey.export({ format: 'jwk' });
    return { keys: [{ ...jwk, kid: randomBytes(8).toString('hex'), use: 'sig', alg: 'RS256' }] };
  });
  const cookieKeys = await getOrCreate(pool, 'cookie_keys', () => [randomBytes(32).toString('base64url')]);
  const clientKey = await getOrCreate(pool, 'client_secret_key', () => randomBytes(32).toString('base64'));
  return { jwks: jwks, cookieKeys, clientSecretKey: Buffer.from(clientKey, 'base64') };
}
