// Project OAuth clients (created by /v1/me/oauth/clients and the admin API): confidential clients bound to one
// project. With redirect URIs they may also use the authorization-code flow (tokens still only for their project).
import { randomBytes } from 'node:crypto';
import type { Pool } from '../db.js';
import { newId } from '../ids.js';
import type { Scope } from '../scopes.js';
import { deriveClientSecret } from './adapter.js';

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

interface Row {
  client_id: string;
  name: string | null;
  scopes: string[];
  metadata: { redirect_uris?: string[]; grant_types?: string[] };
  banks: string[] | null;
  spaces: string[] | null;
  expires_at: Date | null;
  created_at: Date;
}

const COLUMNS = 'client_id, name, scopes, metadata, banks, spaces, expires_at, created_at';

const toPublic = (r: Row): PublicClient => ({
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
    const res = await this.pool.query<Row>(
      `INSERT INTO oauth_clients (client_id, project_id, name, scopes, secret_salt, metadata, banks, spaces, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${COLUMNS}`,
      [
        clientId,
        projectId,
        input.name,
        input.scopes,
        salt,
        JSON.stringify(metadata),
        input.banks,
        input.spaces,
        input.expires_at,
      ],
    );
    const row = res.rows[0];
    if (row === undefined) throw new Error('client insert returned no row');
    return { ...toPublic(row), client_secret: deriveClientSecret(this.secretKey, clientId, salt) };
  }

  async list(projectId: string): Promise<PublicClient[]> {
    const res = await this.pool.query<Row>(
      `SELECT ${COLUMNS} FROM oauth_clients WHERE project_id = $1 ORDER BY created_at, client_id`,
      [projectId],
    );
    return res.rows.map(toPublic);
  }

  /** Deletes the client and every token it holds; they stop working at once. */
  async remove(projectId: string, clientId: string): Promise<boolean> {
    const res = await this.pool.query('DELETE FROM oauth_clients WHERE client_id = $1 AND project_id = $2', [
      clientId,
      projectId,
    ]);
    if (res.rowCount !== 1) return false;
    await this.pool.query('DELETE FROM oauth_store WHERE client_id = $1', [clientId]);
    this.evict(`client:${clientId}`);
    return true;
  }
}
