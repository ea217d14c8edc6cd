// oidc-provider's stored models other than clients (oauth_store): tokens, codes, grants, sessions and interactions,
// one row per model and id, found by id, uid or user code while unexpired.
import type { AdapterPayload } from 'oidc-provider';
import type { Pool } from '../db.js';

/** The columns a stored model is found by. */
export type LookupColumn = 'id' | 'uid' | 'user_code';

export interface StoredEntry {
  payload: AdapterPayload;
  consumed_at: Date | null;
}

export async function upsertEntry(
  pool: Pool,
  model: string,
  id: string,
  payload: AdapterPayload,
  expiresAt: Date | null,
): Promise<void> {
  await pool.query(
    `INSERT INTO oauth_store (model, id, payload, grant_id, uid, user_code, client_id, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id, uid = EXCLUDED.uid,
       user_code = EXCLUDED.user_code, client_id = EXCLUDED.client_id, expires_at = EXCLUDED.expires_at`,
    [
      model,
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

/** The unexpired entry of a model whose `column` holds `value`. */
export async function findEntry(
  pool: Pool,
  model: string,
  column: LookupColumn,
  value: string,
): Promise<StoredEntry | undefined> {
  const res = await pool.query<StoredEntry>(
    `SELECT payload, consumed_at FROM oauth_store WHERE model = $1 AND ${column} = $2 AND (expires_at IS NULL OR expires_at > now())`,
    [model, value],
  );
  return res.rows[0];
}

export async function consumeEntry(pool: Pool, model: string, id: string): Promise<void> {
  await pool.query('UPDATE oauth_store SET consumed_at = now() WHERE model = $1 AND id = $2', [model, id]);
}

export async function deleteEntry(pool: Pool, model: string, id: string): Promise<void> {
  await pool.query('DELETE FROM oauth_store WHERE model = $1 AND id = $2', [model, id]);
}

/** Deletes everything issued under a grant. */
export async function deleteGrant(pool: Pool, grantId: string): Promise<void> {
  await pool.query('DELETE FROM oauth_store WHERE grant_id = $1', [grantId]);
}

/** Drops expired rows; called periodically. */
export async function pruneOAuthStore(pool: Pool): Promise<void> {
  await pool.query('DELETE FROM oauth_store WHERE expires_at < now()');
}
