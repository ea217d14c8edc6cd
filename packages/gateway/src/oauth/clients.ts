// Project OAuth clients (created by /v1/me/oauth/clients and the admin API): confidential clients bound to one
// project. With redirect URIs they may also use the authorization-code flow (tokens still only for their project).
import { randomBytes } from 'node:crypto';
import type { Pool } from '../db.js';
import { newId } from '../ids.js';
import type { Scope } from '../scopes.js';
import { deriveClientSecret } from './adapter.js';
import { deleteProjectClient, insertProjectClient, listProjectClients, type ProjectClientRow } from './client-store.js';

export interface ClientInput {
  name: string;
  scopes: Scope[];
  redirect_uris?: string[] | undefined;
  /** Limits inherited from the creating credential (null: none). */
  banks: string[] | null;
  spaces: string[] | null;
  expires_at: string | null;
}

export interface PublicClient {
  client_id: string;
  name: string | null;
  scopes: string[];
  redirect_uris: string[];
  grant_types: string[];
  banks: string[] | null;
  spaces: string[] | null;
  expires_at: string | null;
  created_at: string;
}

const toPublic = (r: ProjectClientRow): PublicClient => ({
  client_id: r.client_id,
  name: r.name,
  scopes: r.scopes,
  redirect_uris: r.metadata.redirect_uris ?? [],
  grant_types: r.metadata.grant_types ?? [],
  banks: r.banks,
  spaces: r.spaces,
  expires_at: r.expires_at === null ? null : r.expires_at.toISOString(),
  created_at: r.created_at.toISOString(),
});

export class ProjectClients {
  constructor(
    private readonly pool: Pool,
    private readonly secretKey: Buffer,
    private readonly evict: (event: string) => void,
  ) {}

  async create(projectId: string, input: ClientInput): Promise<PublicClient & { client_secret: string }> {
    const clientId = newId('cli');
    const salt = randomBytes(16).toString('base64url');
    const redirectUris = input.redirect_uris ?? [];
    const grantTypes =
      redirectUris.length > 0 ? ['client_credentials', 'authorization_code', 'refresh_token'] : ['client_credentials'];
    const metadata = {
      client_id: clientId,
      client_name: input.name,
      grant_types: grantTypes,
      response_types: redirectUris.length > 0 ? ['code'] : [],
      redirect_uris: redirectUris,
      token_endpoint_auth_method: 'client_secret_basic',
      allowed_scopes: input.scopes.join(' '),
    };
    const row = await insertProjectClient(this.pool, {
      clientId,
      projectId,
      name: input.name,
      scopes: input.scopes,
      salt,
      metadata,
      banks: input.banks,
      spaces: input.spaces,
      expiresAt: input.expires_at,
    });
    return { ...toPublic(row), client_secret: deriveClientSecret(this.secretKey, clientId, salt) };
  }

  async list(projectId: string): Promise<PublicClient[]> {
    return (await listProjectClients(this.pool, projectId)).map(toPublic);
  }

  /** Deletes the client and every token it holds; they stop working at once. */
  async remove(projectId: string, clientId: string): Promise<boolean> {
    if (!(await deleteProjectClient(this.pool, projectId, clientId))) return false;
    this.evict(`client:${clientId}`);
    return true;
  }
}
