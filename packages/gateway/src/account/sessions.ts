// Console sessions, kept in the control plane so every gateway instance knows them and signing out ends them
// everywhere. The cookie carries a random token; only its SHA-256 is stored, so a copy of the table signs nobody in.
import { randomBytes } from 'node:crypto';
import type { Pool } from '../db.js';
import { hashSecret } from '../ids.js';
import { deleteExpiredSessions, deleteSession, findSession, insertSession } from './session-store.js';

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
    const email = await insertSession(this.pool, { tokenHash: hashSecret(token), accountId, csrfToken, expiresAt });
    if (email === undefined) throw new Error(`no account ${accountId}`);
    return { token, session: { accountId, email, csrfToken, expiresAt } };
  }

  /** The live session a token names, or undefined (unknown, signed out or expired). */
  async find(token: string): Promise<Session | undefined> {
    const row = await findSession(this.pool, hashSecret(token), new Date(this.now()));
    if (row === undefined) return undefined;
    return { accountId: row.account_id, email: row.email, csrfToken: row.csrf_token, expiresAt: row.expires_at };
  }

  async revoke(token: string): Promise<void> {
    await deleteSession(this.pool, hashSecret(token));
  }

  /** Drops expired sessions; called periodically. */
  async prune(): Promise<void> {
    await deleteExpiredSessions(this.pool, new Date(this.now()));
  }
}
