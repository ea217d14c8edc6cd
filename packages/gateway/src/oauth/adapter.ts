// oidc-provider storage adapter over the control-plane Postgres. Every model lives in oauth_store, except clients,
// which live in oauth_clients: project clients (created by /v1/me/oauth/clients) keep no secret at rest (the secret is
// an HMAC of the client id and a stored salt under a gateway key), dynamically registered clients are stored as given.
import { createHmac } from 'node:crypto';
import { errors as oidcErrors, type Adapter, type AdapterPayload } from 'oidc-provider';
import type { Pool } from '../db.js';
import { findUnstorableText, isStorableText } from '@mnemos/http-input';

export interface AdapterHooks {
  /** Called when tokens stop being valid, so cached lookups are evicted (`token:`, `grant:`, `client:` events). */
  evict(event: string): void;
  clientSecretKey: Buffer;
}

export function deriveClientSecret(key: Buffer, clientId: string, salt: string): string {
  return createHmac('sha256', key).update(`client-secret:${clientId}:${salt}`).digest('base64url');
}

const TOKEN_MODELS = new Set(['AccessToken', 'ClientCredentials', 'RefreshToken', 'AuthorizationCode']);

export class PgAdapter implements Adapter {
  constructor(
    private readonly pool: Pool,
    private readonly model: string,
    private readonly hooks: AdapterHooks,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    // What is stored holds request parameters (an authorization request's state, nonce, scope...): text the database
    // cannot hold is the caller's mistake, answered as invalid_request rather than failing in the database.
    const unstorable = findUnstorableText(payload);
    if (unstorable !== undefined) {
      throw new oidcErrors.InvalidRequest(
        `${unstorable.pointer.slice(1).split('/').pop() ?? 'a parameter'} ${unstorable.detail}`,
      );
    }
    if (this.model === 'Client') {
      await this.pool.query(
        `INSERT INTO oauth_clients (client_id, project_id, name, scopes, secret_salt, metadata)
         VALUES ($1, NULL, $2, $3, NULL, $4)
         ON CONFLICT (client_id) DO UPDATE SET metadata = EXCLUDED.metadata, name = EXCLUDED.name, scopes = EXCLUDED.scopes`,
        [
          id,
          payload.client_name ?? null,
          (payload.scope ?? '').split(' ').filter((s) => s.length > 0),
          JSON.stringify(payload),
        ],
      );
      return;
    }
    const expiresAt = expiresIn === undefined ? null : new Date(Date.now() + expiresIn * 1000);
    await this.pool.query(
      `INSERT INTO oauth_store (model, id, payload, grant_id, uid, user_code, client_id, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id, uid = EXCLUDED.uid,
         user_code = EXCLUDED.user_code, client_id = EXCLUDED.client_id, expires_at = EXCLUDED.expires_at`,
      [
        this.model,
        id,
        JSON.stringify(payload),
        payload.grantId ?? null,
        payload.uid ?? null,
        payload.userCode ?? null,
        payload.clientId ?? null,
        expiresAt,
      ],
    );
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    // Identifiers come from requests; one the database cannot hold names nothing (an unknown client, a bad token).
    if (!isStorableText(id)) return undefined;
    if (this.model === 'Client') {
      const res = await this.pool.query<{
        project_id: string | null;
        secret_salt: string | null;
        metadata: AdapterPayload;
      }>('SELECT project_id, secret_salt, metadata FROM oauth_clients WHERE client_id = $1', [id]);
      const row = res.rows[0];
      if (row === undefined) return undefined;
      const metadata: AdapterPayload = { ...row.metadata, client_id: id };
      if (row.secret_salt !== null)
        metadata.client_secret = deriveClientSecret(this.hooks.clientSecretKey, id, row.secret_salt);
      if (row.project_id !== null) metadata['project_id'] = row.project_id;
      return metadata;
    }
    return this.select('id = $2', id);
  }

  private async select(where: string, value: string): Promise<AdapterPayload | undefined> {
    if (!isStorableText(value)) return undefined;
    const res = await this.pool.query<{ payload: AdapterPayload; consumed_at: Date | null }>(
      `SELECT payload, consumed_at FROM oauth_store WHERE model = $1 AND ${where} AND (expires_at IS NULL OR expires_at > now())`,
      [this.model, value],
    );
    const row = res.rows[0];
    if (row === undefined) return undefined;
    return row.consumed_at === null
      ? row.payload
      : { ...row.payload, consumed: Math.floor(row.consumed_at.getTime() / 1000) };
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.select('user_code = $2', userCode);
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.select('uid = $2', uid);
  }

  async consume(id: string): Promise<void> {
    if (!isStorableText(id)) return;
    await this.pool.query('UPDATE oauth_store SET consumed_at = now() WHERE model = $1 AND id = $2', [this.model, id]);
  }

  async destroy(id: string): Promise<void> {
    if (!isStorableText(id)) return;
    if (this.model === 'Client') {
      await this.pool.query('DELETE FROM oauth_clients WHERE client_id = $1', [id]);
      await this.pool.query('DELETE FROM oauth_store WHERE client_id = $1', [id]);
      this.hooks.evict(`client:${id}`);
      return;
    }
    await this.pool.query('DELETE FROM oauth_store WHERE model = $1 AND id = $2', [this.model, id]);
    if (TOKEN_MODELS.has(this.model)) this.hooks.evict(`token:${id}`);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.pool.query('DELETE FROM oauth_store WHERE grant_id = $1', [grantId]);
    this.hooks.evict(`grant:${grantId}`);
  }
}

/** Drops expired rows; called periodically. */
export async function pruneOAuthStore(pool: Pool): Promise<void> {
  await pool.query('DELETE FROM oauth_store WHERE expires_at < now()');
}
