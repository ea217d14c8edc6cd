// The account endpoints the console signs in with: sign-up, the session (sign in, who am I, sign out) and the
// projects of the signed-in account. Sign-in failures are throttled per account and per address; sign-ups per address
// and in all.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { GatewayContext } from '../context.js';
import { verifyPassword } from '../ids.js';
import type { SignInThrottle } from '../oauth/signin-throttle.js';
import { isStorableText } from '@mnemos/http-input';
import { admitCreation } from '../creation-limits.js';
import { authenticateFirst } from '../early-auth.js';
import { problem, type Problem } from '@mnemos/problems';
import { answers, SESSION_ROUTE } from '../route-problems.js';
import { guarded } from '../proxy.js';
import type { Project } from '../store.js';
import { checkPassword } from './password-rule.js';
import { sessionGate } from './session-gate.js';
import type { Session } from './sessions.js';

export const ACCOUNT_SECURITY = [{ consoleSession: [] }];

const Account = Type.Object({ id: Type.String(), email: Type.String() });
const SessionAnswer = Type.Object({
  account: Account,
  csrf_token: Type.String({
    description: 'Send it as X-CSRF-Token on every state-changing call signed in by the cookie',
  }),
});
const ProjectSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  plan: Type.String(),
  tenant: Type.String(),
  created_at: Type.String(),
});
const Credentials = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);
const SignUpBody = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 320 }),
    password: Type.String({ maxLength: 1024 }),
  },
  { additionalProperties: false },
);
const ProjectBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);
const IdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }) });

const sessionAnswer = (s: Session): { account: { id: string; email: string }; csrf_token: string } => ({
  account: { id: s.accountId, email: s.email },
  csrf_token: s.csrfToken,
});

const projectAnswer = (p: Project): { id: string; name: string; plan: string; tenant: string; created_at: string } => ({
  id: p.id,
  name: p.name,
  plan: p.plan,
  tenant: p.tenant,
  created_at: p.created_at,
});

/** The answer to a sign-in while the account or address is paused, saying when to try again. */
function throttled(waitMs: number, now: number): Problem {
  const seconds = Math.ceil(waitMs / 1000);
  const at = new Date(now + seconds * 1000).toISOString().slice(11, 16);
  const minutes = Math.ceil(seconds / 60);
  return problem(
    'signin_throttled',
    'paused',
    { minutes, at },
    { headers: { 'retry-after': String(seconds) }, extra: { retry_after: seconds } },
  );
}

export function accountRoutes(app: FastifyInstance, ctx: GatewayContext, throttle: SignInThrottle): void {
  const tags = ['account'];
  const { onRequest: requireSession, sessionOf } = sessionGate(ctx.console);

  /** A sign-in replaces the browser's previous session: the old token stops working, so none is left behind. */
  const startSession = async (
    request: FastifyRequest,
    reply: FastifyReply,
    accountId: string,
    status: number,
  ): Promise<FastifyReply> => {
    const previous = await ctx.console.current(request);
    if (previous !== undefined) await ctx.sessions.revoke(previous.token);
    const { token, session } = await ctx.sessions.create(accountId);
    ctx.console.setCookie(reply, token);
    return reply.code(status).header('cache-control', 'no-store').send(sessionAnswer(session));
  };

  app.post(
    '/v1/account/signup',
    {
      schema: {
        operationId: 'signUp',
        summary: 'Create an account and sign in (unless GATEWAY_SIGNUP=closed)',
        tags,
        security: [],
        body: SignUpBody,
        ...answers({ 201: SessionAnswer }, ['weak_password', 'signup_closed', 'account_exists', 'rate_limited']),
      },
      // Closed sign-up is refused before the body is read.
      onRequest: authenticateFirst(async () => {
        if (ctx.config.signup === 'closed') {
          throw problem('signup_closed', 'closed');
        }
      }),
    },
    guarded(async (request: FastifyRequest, reply: FastifyReply) => {
      const body = request.body as { email: string; password: string };
      checkPassword(body.password, body.email);
      // Counted once the request could create an account: a taken email counts too, so sign-up cannot be used to
      // test many emails for accounts quickly.
      await admitCreation(ctx.limiter, request, 'signUps', ctx.config.signUps);
      const account = await ctx.store.createAccount({ email: body.email, password: body.password });
      if (account === null) {
        throw problem('account_exists', 'signUp');
      }
      return startSession(request, reply, account.id, 201);
    }),
  );

  app.post(
    '/v1/account/session',
    {
      schema: {
        operationId: 'signIn',
        summary: 'Sign in: sets the session cookie',
        tags,
        security: [],
        body: Credentials,
        ...answers({ 200: SessionAnswer }, ['invalid_credentials', 'signin_throttled']),
      },
    },
    guarded(async (request: FastifyRequest, reply: FastifyReply) => {
      const { email, password } = request.body as { email: string; password: string };
      const waitMs = throttle.waitMs(email, request.ip);
      if (waitMs > 0) throw throttled(waitMs, Date.now());
      // An email the database cannot hold names no account; it counts as a wrong guess rather than a server error.
      const creds = isStorableText(email) ? await ctx.store.accountCredentials(email) : undefined;
      const ok = await verifyPassword(password, creds?.password_hash ?? null);
      if (creds === undefined || !ok) {
        throttle.recordFailure(email, request.ip);
        throw problem('invalid_credentials', 'wrongPassword');
      }
      throttle.recordSuccess(email);
      return startSession(request, reply, creds.id, 200);
    }),
  );

  app.get(
    '/v1/account/session',
    {
      schema: {
        operationId: 'getSession',
        summary: 'The signed-in account and its CSRF token',
        tags,
        security: ACCOUNT_SECURITY,
        ...answers({ 200: SessionAnswer }, SESSION_ROUTE),
      },
      onRequest: requireSession,
    },
    guarded(async (request: FastifyRequest, reply: FastifyReply) => {
      const { session } = sessionOf(request);
      return reply.header('cache-control', 'no-store').send(sessionAnswer(session));
    }),
  );

  app.delete(
    '/v1/account/session',
    {
      schema: {
        operationId: 'signOut',
        summary: 'Sign out: ends the session everywhere and clears the cookie',
        tags,
        security: ACCOUNT_SECURITY,
        ...answers({ 204: Type.Null() }, SESSION_ROUTE),
      },
      onRequest: requireSession,
    },
    guarded(async (request: FastifyRequest, reply: FastifyReply) => {
      const { token } = sessionOf(request);
      await ctx.sessions.revoke(token);
      ctx.console.clearCookie(reply);
      return reply.code(204).send();
    }),
  );

  app.get(
    '/v1/account/projects',
    {
      schema: {
        operationId: 'listAccountProjects',
        summary: 'Projects of the signed-in account',
        tags,
        security: ACCOUNT_SECURITY,
        ...answers({ 200: Type.Object({ projects: Type.Array(ProjectSchema) }) }, SESSION_ROUTE),
      },
      onRequest: requireSession,
    },
    guarded(async (request: FastifyRequest, reply: FastifyReply) => {
      const { session } = sessionOf(request);
      const projects = await ctx.store.listProjects(session.accountId);
      return reply.send({ projects: projects.map(projectAnswer) });
    }),
  );

  app.post(
    '/v1/account/projects',
    {
      schema: {
        operationId: 'createAccountProject',
        summary: 'Create a project (free plan) for the signed-in account',
        tags,
        security: ACCOUNT_SECURITY,
        body: ProjectBody,
        ...answers({ 201: ProjectSchema }, SESSION_ROUTE),
      },
      onRequest: requireSession,
    },
    guarded(async (request: FastifyRequest, reply: FastifyReply) => {
      const { session } = sessionOf(request);
      const { name } = request.body as { name: string };
      const project = await ctx.store.createProject({ name, account_id: session.accountId });
      return reply.code(201).send(projectAnswer(project));
    }),
  );

  app.patch(
    '/v1/account/projects/:id',
    {
      schema: {
        operationId: 'renameAccountProject',
        summary: 'Rename a project of the signed-in account',
        tags,
        security: ACCOUNT_SECURITY,
        params: IdParam,
        body: ProjectBody,
        ...answers({ 200: ProjectSchema }, [...SESSION_ROUTE, 'not_found']),
      },
      onRequest: requireSession,
    },
    guarded(async (request: FastifyRequest, reply: FastifyReply) => {
      const { session } = sessionOf(request);
      const { id } = request.params as { id: string };
      await ctx.console.ownProject(session, id);
      const { name } = request.body as { name: string };
      const updated = await ctx.store.updateProject(id, { name });
      if (updated === undefined) throw problem('not_found', 'noAccountProject', { id });
      ctx.auth.evict(`project:${id}`);
      return reply.send(projectAnswer(updated));
    }),
  );
}
