// Gateway-wide secrets, generated on first start and kept in the control plane so every gateway instance shares them:
// the OAuth signing key (JWKS), cookie keys, and the key that derives project OAuth client secrets.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { JWK } from 'oidc-provider';
import type { Pool } from './db.js';
import { secretOrStore } from './secret-store.js';

export interface GatewaySecrets {
  jwks: { keys: JWK[] };
  cookieKeys: string[];
  clientSecretKey: Buffer;
}

/** A fresh RS256 signing key, stored only if no gateway stored one yet. */
function newJwks(): { keys: JWK[] } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = privateKey.export({ format: 'jwk' });
  return { keys: [{ ...jwk, kid: randomBytes(8).toString('hex'), use: 'sig', alg: 'RS256' }] };
}

export async function loadSecrets(pool: Pool): Promise<GatewaySecrets> {
  const jwks = await secretOrStore(pool, 'jwks', newJwks());
  const cookieKeys = await secretOrStore(pool, 'cookie_keys', [randomBytes(32).toString('base64url')]);
  const clientKey = await secretOrStore(pool, 'client_secret_key', randomBytes(32).toString('base64'));
  return { jwks, cookieKeys, clientSecretKey: Buffer.from(clientKey, 'base64') };
}
