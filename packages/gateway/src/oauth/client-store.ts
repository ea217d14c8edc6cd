// The OAuth clients' table (oauth_clients): clients registered through oidc-provider, stored as given, and project
// clients, which keep a salt instead of a secret and the bank, space and expiry limits of the credential that made them.
import type { AdapterPayload } from 'oidc-provider';
import type { Pool } from '../db.js';

/** A project client as listed. */
export interface ProjectClientRow {
  client_id: string;
  name: string | null;
  scopes: string[];
  metadata: { redirect_uris?: string[]; grant_types?: string[] };
  banks: string[] | null;
  spaces: string[] | null;
  expires_at: Date | null;
  created_at: Date;
}

/** What oidc-provider's adapter reads of a client. */
export interface StoredClient {
  project_id: string | null;
  secret_salt: string | null;
  metadata: AdapterPayload;
}

const COLUMNS = 'client_id, name, scopes, metadata, banks, spaces, expires_at, created_at';

/** Stores a client registered through oidc-provider (no project, no salt), or updates its metadata. */
export async function upsertRegisteredClient(
  pool: Pool,
  client: { clientId: string; name: string | null; scopes: string[]; metadata: AdapterPayload },
): Promise<void> {
  await pool.query(
    `INSERT INTO oauth_clients (client_id, project_id, name, scopes, secret_salt, metadata)
     VALUES ($1, NULL, $2, $3, NULL, $4)
     ON CONFLICT (client_id) DO UPDATE SET metadata = EXCLUDED.metadata, name = EXCLUDED.name, scopes = EXCLUDED.scopes`,
    [client.clientId, client.name, client.scopes, JSON.stringify(client.metadata)],
  );
}

export async function findClient(pool: Pool, clientId: string): Promise<StoredClient | undefined> {
  const res = await pool.query<StoredClient>(
    'SELECT project_id, secret_salt, metadata FROM oauth_clients WHERE client_id = $1',
    [clientId],
  );
  return res.rows[0];
}

/** Deletes a client and every token, code and grant stored for it. */
export async function deleteClient(pool: Pool, clientId: string): Promise<void> {
  await pool.query('DELETE FROM oauth_clients WHERE client_id = $1', [clientId]);
  await pool.query('DELETE FROM oauth_store WHERE client_id = $1', [clientId]);
}

export async function insertProjectClient(
  pool: Pool,
  c: {
    clientId: string;
    projectId: string;
    name: string;
    scopes: string[];
    salt: string;
    metadata: object;
    banks: string[] | null;
    spaces: string[] | null;
    expiresAt: string | null;
  },
): Promise<ProjectClientRow> {
  const res = await pool.query<ProjectClientRow>(
    `INSERT INTO oauth_clients (client_id, project_id, name, scopes, secret_salt, metadata, banks, spaces, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${COLUMNS}`,
    [c.clientId, c.projectId, c.name, c.scopes, c.salt, JSON.stringify(c.metadata), c.banks, c.spaces, c.expiresAt],
  );
  const row = res.rows[0];
  if (row === undefined) throw new Error('client insert returned no row');
  return row;
}

export async function listProjectClients(pool: Pool, projectId: string): Promise<ProjectClientRow[]> {
  const res = await pool.query<ProjectClientRow>(
    `SELECT ${COLUMNS} FROM oauth_clients WHERE project_id = $1 ORDER BY created_at, client_id`,
    [projectId],
  );
  return res.rows;
}

/** Deletes a project's client and everything stored for it; false when the project has no such client. */
export async function deleteProjectClient(pool: Pool, projectId: string, clientId: string): Promise<boolean> {
  const res = await pool.query('DELETE FROM oauth_clients WHERE client_id = $1 AND project_id = $2', [
    clientId,
    projectId,
  ]);
  if (res.rowCount !== 1) return false;
  await pool.query('DELETE FROM oauth_store WHERE client_id = $1', [clientId]);
  return true;
}
