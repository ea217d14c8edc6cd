// The console sessions' table: a session is found by the SHA-256 of its cookie token, never by the token itself.
import type { Pool } from '../db.js';

export interface SessionRow {
  account_id: string;
  email: string;
  csrf_token: string;
  expires_at: Date;
}

/** Stores a session; returns its account's email, or undefined when no such account exists. */
export async function insertSession(
  pool: Pool,
  s: { tokenHash: Buffer; accountId: string; csrfToken: string; expiresAt: Date },
): Promise<string | undefined> {
  const res = await pool.query<{ email: string }>(
    `WITH s AS (INSERT INTO account_sessions (token_hash, account_id, csrf_token, expires_at) VALUES ($1, $2, $3, $4))
     SELECT email FROM accounts WHERE id = $2`,
    [s.tokenHash, s.accountId, s.csrfToken, s.expiresAt],
  );
  return res.rows[0]?.email;
}

/** The session stored under a token hash that is still live at `now`. */
export async function findSession(pool: Pool, tokenHash: Buffer, now: Date): Promise<SessionRow | undefined> {
  const res = await pool.query<SessionRow>(
    `SELECT s.account_id, a.email, s.csrf_token, s.expires_at
     FROM account_sessions s JOIN accounts a ON a.id = s.account_id
     WHERE s.token_hash = $1 AND s.expires_at > $2`,
    [tokenHash, now],
  );
  return res.rows[0];
}

export async function deleteSession(pool: Pool, tokenHash: Buffer): Promise<void> {
  await pool.query('DELETE FROM account_sessions WHERE token_hash = $1', [tokenHash]);
}

export async function deleteExpiredSessions(pool: Pool, now: Date): Promise<void> {
  await pool.query('DELETE FROM account_sessions WHERE expires_at <= $1', [now]);
}
