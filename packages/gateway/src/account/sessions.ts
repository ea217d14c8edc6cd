// Console sessions, kept in the control plane so every gateway instance knows them and signing out ends them
// everywhere. The cookie carries a random token; only its SHA-256 is stored, so a copy of the table signs nobody in.
import { randomBytes } from 'node:crypto';
import type { Pool } from '../db.js';
import { hashSecret } from '../ids.js';

export interface Session {
  accountId: string;
  email: string;
  /** Sent back by the console in X-CSRF-Token on every state-changing call. */
  csrfToken: string;
  expiresAt: Date;
}

export class Sessions {
  constructor(
    private readonly pool: Pool,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get ttlSeconds(): number {
    return Math.floor(this.ttlMs / 1000);
  }

  /** Starts a session for an account; returns the token for the cookie. */
  async create(accountId: string): Promise<{ token: string; session: Session }> {
    const token = randomBytes(32).toString('base64url');
    const csrfToken = randomBytes(24).toString('base64url');
    const expiresAt = new Date(this.now() + this.ttlMs);
    const res = await this.pool.query<{ email: string }>(
      `WITH s AS (INSERT INTO account_sessions (token_hash, account_id, csrf_token, expires_at) VALUES ($1, $2, $3, $4))
       SELECT email FROM accounts WHERE id = $2`,
      [hashSecret(token), accountId, csrfToken, expiresAt],
    );
    const email = res.rows[0]?.email;
    if (email === undefined) throw new Error(`no account ${accountId}`);
    return { token, session: { accountId, email, csrfToken, expiresAt } };
  }

  /** The live session a token names, or undefined (unknown, signed out or expired). */
  async find(token: string): Promise<Session | undefined> {
    const res = await this.pool.query<{ account_id: string; email: string; csrf_token: string; expires_at: Date }>(
      `SELECT s.account_id, a.email, s.csrf_token, s.expires_at
       FROM account_sessions s JOIN accounts a ON a.id = s.account_id
       WHERE s.token_hash = $1 AND s.expires_at > $2`,
      [hashSecret(token), new Date(this.now())],
    );
    const row = res.rows[0];
    if (row === undefined) return undefined;
    return { accountId: row.account_id, email: row.email, csrfToken: row.csrf_token, expiresAt: row.expires_at };
  }

  async revoke(token: string): Promise<void> {
    await this.pool.query('DELETE FROM account_sessions WHERE token_hash = $1', [hashSecret(token)]);
  }

  /** Drops expired sessions; called periodically. */
  async prune(): Promise<void> {
    await this.pool.query('DELETE FROM account_sessions WHERE expires_at <= $1', [new Date(this.now())]);
  }
}
