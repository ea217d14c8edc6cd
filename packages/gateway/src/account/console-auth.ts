// Authentication by the console's session cookie: who is signed in, the CSRF check of state-changing calls, and the
// project a signed-in account acts on (header X-Mnemos-Project), with every scope, through the /v1/me routes.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../auth.js';
import { constantTimeEqualString } from '../ids.js';
import { problem, type Problem } from '@mnemos/problems';
import { SCOPES } from '../scopes.js';
import type { Project, Store } from '../store.js';
import type { Session, Sessions } from './sessions.js';

export const SESSION_COOKIE = 'mnemos_session';
export const CSRF_HEADER = 'x-csrf-token';
export const PROJECT_HEADER = 'x-mnemos-project';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const PROJECT_ID = /^[A-Za-z0-9_-]{1,64}$/;

export const csrfFailed = (): Problem => problem('csrf_failed', 'missingToken');

export class ConsoleAuth {
  constructor(
    private readonly sessions: Sessions,
    private readonly store: Store,
    private readonly publicUrl: () => string,
  ) {}

  /** Whether the request carries a session cookie (valid or not). */
  hasCookie(request: FastifyRequest): boolean {
    return (request.cookies[SESSION_COOKIE] ?? '') !== '';
  }

  /** The live session of the request's cookie, with its token; no CSRF check. */
  async current(request: FastifyRequest): Promise<{ token: string; session: Session } | undefined> {
    const token = request.cookies[SESSION_COOKIE] ?? '';
    // Tokens are 43 base64url characters; anything else names no session and costs no lookup.
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
    const session = await this.sessions.find(token);
    return session === undefined ? undefined : { token, session };
  }

  /** The signed-in session (401 without one); a state-changing call must also pass the CSRF check (403). */
  async require(request: FastifyRequest): Promise<{ token: string; session: Session }> {
    const found = await this.current(request);
    if (found === undefined) {
      throw problem('unauthorized', 'sessionEnded');
    }
    if (!SAFE_METHODS.has(request.method)) {
      const sent = request.headers[CSRF_HEADER];
      if (typeof sent !== 'string' || !constantTimeEqualString(sent, found.session.csrfToken)) throw csrfFailed();
    }
    return found;
  }

  /** A project of the signed-in account, or 404 (another account's project is not revealed). */
  async ownProject(session: Session, projectId: string): Promise<Project> {
    const project = PROJECT_ID.test(projectId) ? await this.store.getProject(projectId) : undefined;
    if (project === undefined || project.account_id !== session.accountId) {
      throw problem('not_found', 'noAccountProject', { id: projectId });
    }
    return project;
  }

  /** The principal of a console call on a project: the account's own project, with every scope. */
  async principal(request: FastifyRequest): Promise<Principal> {
    const { session } = await this.require(request);
    const header = request.headers[PROJECT_HEADER];
    if (typeof header !== 'string' || header.length === 0) {
      throw problem('project_required', 'header');
    }
    const project = await this.ownProject(session, header);
    return {
      kind: 'session',
      id: session.accountId,
      project,
      scopes: new Set(SCOPES),
      banks: null,
      spaces: null,
      expiresAt: null,
      rateKey: `session:${session.accountId}:${project.id}`,
      rateLimitPerMinute: null,
    };
  }

  setCookie(reply: FastifyReply, token: string): void {
    reply.setCookie(SESSION_COOKIE, token, { ...this.cookieOptions(), maxAge: this.sessions.ttlSeconds });
  }

  clearCookie(reply: FastifyReply): void {
    reply.clearCookie(SESSION_COOKIE, this.cookieOptions());
  }

  private cookieOptions(): { httpOnly: true; sameSite: 'lax'; secure: boolean; path: string } {
    return { httpOnly: true, sameSite: 'lax', secure: this.publicUrl().startsWith('https:'), path: '/' };
  }
}
