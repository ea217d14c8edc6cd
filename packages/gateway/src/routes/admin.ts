// Admin API (Authorization: Bearer $GATEWAY_ADMIN_TOKEN): accounts, projects, their keys, OAuth clients, plan,
// quotas, engine placement and usage.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { problem, type ProblemCode } from '@mnemos/problems';
import { checkPassword } from '../account/password-rule.js';
import type { GatewayContext } from '../context.js';
import { constantTimeEqualString } from '../ids.js';
import { authenticateFirst } from '../early-auth.js';
import { guarded } from '../proxy.js';
import { ADMIN_ROUTE, answers } from '../route-problems.js';
import { PLANS, type QuotaOverrides } from '../plans.js';
import type { KeyInput, Project } from '../store.js';
import { KeyCreateBody, Open, UsageSchema } from '../schemas.js';
import { ClientBody, type ClientRequest, type ProjectHandlers } from './project.js';

const ProjectId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }) });
const ProjectSub = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }),
  sub: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }),
});
const Plan = Type.String({ pattern: '^[a-z0-9_-]{1,32}$' });
const Quota = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
/** A quota override in a project update: a number sets it, null removes it (the plan's quota applies again). */
const QuotaOverride = Type.Union([Quota, Type.Null()]);
/** Most admin routes name a project (or a key or client of one) that may not exist. */
const PROJECT_ROUTE: readonly ProblemCode[] = [...ADMIN_ROUTE, 'not_found'];
/** Wrong admin tokens allowed per address in a one-minute window. */
export const ADMIN_FAILURES_PER_MINUTE = 10;

export function adminRoutes(app: FastifyInstance, ctx: GatewayContext, h: ProjectHandlers): void {
  app.register(async (admin) => {
    admin.addHook(
      'onRequest',
      authenticateFirst(async (request: FastifyRequest) => {
        // Wrong tokens are counted per address; an address past the limit is refused before its token is compared, so
        // guessing is slow, while the token from any other address works as before.
        const failures = `admin-failures:${request.ip}`;
        const wait = await ctx.limiter.wait(request, failures, ADMIN_FAILURES_PER_MINUTE);
        if (wait > 0) {
          throw problem(
            'rate_limited',
            'adminTokenGuessing',
            { wait },
            { headers: { 'retry-after': String(wait) }, extra: { retry_after: wait } },
          );
        }
        const m = /^Bearer[ ]+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
        if (m?.[1] === undefined || !constantTimeEqualString(m[1], ctx.config.adminToken)) {
          await ctx.limiter.take(request, failures, ADMIN_FAILURES_PER_MINUTE);
          throw problem('unauthorized', 'adminToken');
        }
      }),
    );

    const project = async (req: FastifyRequest): Promise<Project> => {
      const id = (req.params as { id: string }).id;
      const p = await ctx.store.getProject(id);
      if (p === undefined) throw problem('not_found', 'noProject', { id });
      return p;
    };
    const sub = (req: FastifyRequest): string => (req.params as { sub: string }).sub;
    const tags = ['admin'];
    const sec = [{ adminToken: [] }];

    admin.post(
      '/admin/accounts',
      {
        schema: {
          operationId: 'adminCreateAccount',
          summary: 'Create a console account',
          tags,
          security: sec,
          body: Type.Object(
            {
              email: Type.String({ format: 'email', maxLength: 320 }),
              name: Type.Optional(Type.String({ maxLength: 200 })),
              password: Type.Optional(Type.String({ maxLength: 1024 })),
            },
            { additionalProperties: false },
          ),
          ...answers({ 201: Open }, [...ADMIN_ROUTE, 'weak_password', 'account_exists']),
        },
      },
      guarded(async (request, reply: FastifyReply) => {
        const body = request.body as { email: string; name?: string; password?: string };
        if (body.password !== undefined) checkPassword(body.password, body.email);
        const account = await ctx.store.createAccount(body);
        if (account === null) throw problem('account_exists', 'adminCreate');
        return reply.code(201).send(account);
      }),
    );

    admin.get(
      '/admin/projects',
      {
        schema: {
          operationId: 'adminListProjects',
          summary: 'List every project',
          tags,
          security: sec,
          ...answers({ 200: Open }, ADMIN_ROUTE),
        },
      },
      guarded(async (_request, reply: FastifyReply) => reply.send({ items: await ctx.store.listProjects() })),
    );

    admin.post(
      '/admin/projects',
      {
        schema: {
          operationId: 'adminCreateProject',
          summary: 'Create a project',
          tags,
          security: sec,
          body: Type.Object(
            {
              name: Type.String({ minLength: 1, maxLength: 200 }),
              account_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
              plan: Type.Optional(Plan),
              engine: Type.Optional(Type.String({ pattern: '^[a-z0-9_-]{1,64}$' })),
            },
            { additionalProperties: false },
          ),
          ...answers({ 201: Open }, PROJECT_ROUTE),
        },
      },
      guarded(async (request, reply: FastifyReply) => {
        const body = request.body as { name: string; account_id?: string; plan?: string; engine?: string };
        checkPlanAndEngine(ctx, body.plan, body.engine);
        if (body.account_id !== undefined && !(await ctx.store.accountExists(body.account_id))) {
          throw problem(
            'validation_failed',
            'unknownAccount',
            { accountId: body.account_id },
            {
              errors: [{ pointer: '/account_id', detail: 'unknown account' }],
            },
          );
        }
        return reply.code(201).send(await ctx.store.createProject(body));
      }),
    );

    admin.get(
      '/admin/projects/:id',
      {
        schema: {
          operationId: 'adminGetProject',
          summary: 'Get a project',
          tags,
          security: sec,
          params: ProjectId,
          ...answers({ 200: Open }, PROJECT_ROUTE),
        },
      },
      guarded(async (request, reply: FastifyReply) => reply.send(await project(request))),
    );

    admin.patch(
      '/admin/projects/:id',
      {
        schema: {
          operationId: 'adminPatchProject',
          summary: "Change a project's name, plan, quotas or engine",
          tags,
          security: sec,
          params: ProjectId,
          body: Type.Object(
            {
              name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
              plan: Type.Optional(Plan),
              quotas: Type.Optional(
                Type.Object(
                  {
                    memories: Type.Optional(QuotaOverride),
                    recalls: Type.Optional(QuotaOverride),
                    reflects: Type.Optional(QuotaOverride),
                    requests_per_minute: Type.Optional(
                      Type.Union([Type.Integer({ minimum: 1, maximum: 100_000_000 }), Type.Null()]),
                    ),
                  },
                  { additionalProperties: false },
                ),
              ),
              engine: Type.Optional(Type.String({ pattern: '^[a-z0-9_-]{1,64}$' })),
            },
            { additionalProperties: false },
          ),
          ...answers({ 200: Open }, PROJECT_ROUTE),
        },
      },
      guarded(async (request, reply: FastifyReply) => {
        const body = request.body as { name?: string; plan?: string; quotas?: QuotaOverrides; engine?: string };
        checkPlanAndEngine(ctx, body.plan, body.engine);
        const id = (request.params as { id: string }).id;
        const updated = await ctx.store.updateProject(id, body);
        if (updated === undefined) throw problem('not_found', 'noProject', { id });
        ctx.auth.evict(`project:${id}`);
        return reply.send(updated);
      }),
    );

    admin.get(
      '/admin/projects/:id/usage',
      {
        schema: {
          operationId: 'adminGetUsage',
          summary: "A project's usage this month",
          tags,
          security: sec,
          params: ProjectId,
          ...answers({ 200: UsageSchema }, PROJECT_ROUTE),
        },
      },
      guarded(async (request, reply: FastifyReply) => reply.send(await h.usage(await project(request)))),
    );

    admin.post(
      '/admin/projects/:id/keys',
      {
        schema: {
          operationId: 'adminCreateKey',
          summary: 'Create an API key for a project',
          tags,
          security: sec,
          params: ProjectId,
          body: KeyCreateBody,
          ...answers({ 201: Open }, PROJECT_ROUTE),
        },
      },
      guarded(async (request, reply: FastifyReply) =>
        reply.code(201).send(await h.createKey(await project(request), request.body as KeyInput, null)),
      ),
    );
    admin.get(
      '/admin/projects/:id/keys',
      {
        schema: {
          operationId: 'adminListKeys',
          summary: "List a project's API keys",
          tags,
          security: sec,
          params: ProjectId,
          ...answers({ 200: Open }, PROJECT_ROUTE),
        },
      },
      guarded(async (request, reply: FastifyReply) => reply.send(await h.listKeys(await project(request), null))),
    );
    admin.delete(
      '/admin/projects/:id/keys/:sub',
      {
        schema: {
          operationId: 'adminRevokeKey',
          summary: 'Revoke an API key',
          tags,
          security: sec,
          params: ProjectSub,
          ...answers({ 200: Open }, PROJECT_ROUTE),
        },
      },
      guarded(async (request, reply: FastifyReply) =>
        reply.send(await h.revokeKey(await project(request), sub(request), null)),
      ),
    );

    admin.post(
      '/admin/projects/:id/oauth/clients',
      {
        schema: {
          operationId: 'adminCreateOAuthClient',
          summary: 'Register an OAuth client for a project',
          tags,
          security: sec,
          params: ProjectId,
          body: ClientBody,
          ...answers({ 201: Open }, PROJECT_ROUTE),
        },
      },
      guarded(async (request, reply: FastifyReply) =>
        reply.code(201).send(await h.createClient(await project(request), request.body as ClientRequest, null)),
      ),
    );
    admin.get(
      '/admin/projects/:id/oauth/clients',
      {
        schema: {
          operationId: 'adminListOAuthClients',
          summary: "List a project's OAuth clients",
          tags,
          security: sec,
          params: ProjectId,
          ...answers({ 200: Open }, PROJECT_ROUTE),
        },
      },
      guarded(async (request, reply: FastifyReply) => reply.send(await h.listClients(await project(request), null))),
    );
    admin.delete(
      '/admin/projects/:id/oauth/clients/:sub',
      {
        schema: {
          operationId: 'adminDeleteOAuthClient',
          summary: 'Delete an OAuth client',
          tags,
          security: sec,
          params: ProjectSub,
          ...answers({ 200: Open }, PROJECT_ROUTE),
        },
      },
      guarded(async (request, reply: FastifyReply) =>
        reply.send(await h.deleteClient(await project(request), sub(request), null)),
      ),
    );
  });
}

function checkPlanAndEngine(ctx: GatewayContext, plan: string | undefined, engine: string | undefined): void {
  if (plan !== undefined && PLANS[plan] === undefined) {
    throw problem(
      'validation_failed',
      'unknownPlan',
      { plan, plans: Object.keys(PLANS) },
      { errors: [{ pointer: '/plan', detail: 'unknown plan' }] },
    );
  }
  if (engine !== undefined && !ctx.engines.has(engine)) {
    throw problem(
      'validation_failed',
      'unknownEngine',
      { engine, engines: ctx.engines.names() },
      { errors: [{ pointer: '/engine', detail: 'unknown engine' }] },
    );
  }
}
