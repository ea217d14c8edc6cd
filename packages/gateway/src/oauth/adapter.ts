// oidc-provider storage adapter over the control-plane Postgres. Every model lives in oauth_store, except clients,
// which live in oauth_clients: project clients (created by /v1/me/oauth/clients) keep no secret at rest (the secret is
// an HMAC of the client id and a stored salt under a gateway key), dynamically registered clients are stored as given.
import { createHmac } from 'node:crypto';
import { errors as oidcErrors, type Adapter, type AdapterPayload } from 'oidc-provider';
import type { Pool } from '../db.js';
import { findUnstorableText, isStorableText } from '@mnemos/http-input';
import { deleteClient, findClient, upsertRegisteredClient } from './client-store.js';
import { consumeEntry, deleteEntry, deleteGrant, findEntry, upsertEntry, type LookupColumn } from './token-store.js';

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
      await upsertRegisteredClient(this.pool, {
        clientId: id,
        name: payload.client_name ?? null,
        scopes: (payload.scope ?? '').split(' ').filter((s) => s.length > 0),
        metadata: payload,
      });
      return;
    }
    const expiresAt = expiresIn === undefined ? null : new Date(Date.now() + expiresIn * 1000);
    await upsertEntry(this.pool, this.model, id, payload, expiresAt);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    // Identifiers come from requests; one the database cannot hold names nothing (an unknown client, a bad token).
    if (!isStorableText(id)) return undefined;
    if (this.model === 'Client') {
      const row = await findClient(this.pool, id);
      if (row === undefined) return undefined;
      const metadata: AdapterPayload = { ...row.metadata, client_id: id };
      if (row.secret_salt !== null)
        metadata.client_secret = deriveClientSecret(this.hooks.clientSecretKey, id, row.secret_salt);
      if (row.project_id !== null) metadata['project_id'] = row.project_id;
      return metadata;
    }
    return this.select('id', id);
  }

  private async select(column: LookupColumn, value: string): Promise<AdapterPayload | undefined> {
    if (!isStorableText(value)) return undefined;
    const row = await findEntry(this.pool, this.model, column, value);
    if (row === undefined) return undefined;
    return row.consumed_at === null
      ? row.payload
      : { ...row.payload, consumed: Math.floor(row.consumed_at.getTime() / 1000) };
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.select('user_code', userCode);
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.select('uid', uid);
  }

  async consume(id: string): Promise<void> {
    if (!isStorableText(id)) return;
    await consumeEntry(this.pool, this.model, id);
  }

  async destroy(id: string): Promise<void> {
    if (!isStorableText(id)) return;
    if (this.model === 'Client') {
      await deleteClient(this.pool, id);
      this.hooks.evict(`client:${id}`);
      return;
    }
    await deleteEntry(this.pool, this.model, id);
    if (TOKEN_MODELS.has(this.model)) this.hooks.evict(`token:${id}`);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await deleteGrant(this.pool, grantId);
    this.hooks.evict(`grant:${grantId}`);
  }
}
