// Project management: usage, API keys and OAuth clients, under /v1/me (scopes project:read / project:write) and under
// /admin/projects/{id} (admin token). Both share the handlers below.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { problem } from '@mnemos/problems';
import type { Principal } from '../auth.js';
import type { GatewayContext } from '../context.js';
import { beyondReach, delegate, withinReach, type Delegator, type RequestedLimits } from '../delegation.js';
import type { ProjectClients } from '../oauth/clients.js';
import { authenticateFirst } from '../early-auth.js';
import { authenticate, guarded } from '../proxy.js';
import { principalOf } from '../request-state.js';
import { answers, CREDENTIAL_ROUTE } from '../route-problems.js';
import type { Scope } from '../scopes.js';
import { publicKey, type KeyInput, type Project } from '../store.js';
import { ClientCreateBody, KeyCreateBody, KeyCreated, Open, UsageSchema } from '../schemas.js';
import { security } from './memory.js';

const IdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }) });

/** An OAuth client may be given narrower banks, spaces and expiry, as a key can. */
export const ClientBody = Type.Composite(
  [ClientCreateBody, Type.Pick(KeyCreateBody, ['banks', 'spaces', 'expires_at'])],
  { additionalProperties: false },
);

export interface ClientRequest extends RequestedLimits {
  name: string;
  scopes: Scope[];
  redirect_uris?: string[] | undefined;
}

export interface ProjectHandlers {
  usage(project: Project): Promise<unknown>;
  /** `creator` is the credential asking (null: the admin token); the new key never gets more than it holds. */
  createKey(project: Project, input: KeyInput, creator: Delegator | null): Promise<unknown>;
  /** `manager` is the credential asking (null: the admin token); it sees and revokes only keys within its reach. */
  listKeys(project: Project, manager: Delegator | null): Promise<unknown>;
  revokeKey(project: Project, id: string, manager: Delegator | null): Promise<unknown>;
  createClient(project: Project, input: ClientRequest, creator: Delegator | null): Promise<unknown>;
  listClients(project: Project, manager: Delegator | null): Promise<unknown>;
  deleteClient(project: Project, id: string, manager: Delegator | null): Promise<unknown>;
}

export function projectHandlers(ctx: GatewayContext, clients: ProjectClients): ProjectHandlers {
  return {
    async usage(project) {
      // This gateway's counts are written first, so a single gateway reports exactly; see docs/gateway.md for several.
      await ctx.quotas.sync(project.id);
      return ctx.store.usage(project, new Date());
    },
    async createKey(project, input, creator) {
      const limits = delegate(creator, input);
      const { key, row } = await ctx.store.createKey(project.id, {
        ...limits,
        name: input.name ?? null,
        rate_limit_per_minute: input.rate_limit_per_minute ?? null,
      });
      const pub = publicKey(row);
      return {
        id: pub.id,
        key,
        prefix: pub.prefix,
        scopes: pub.scopes,
        banks: pub.banks,
        spaces: pub.spaces,
        expires_at: pub.expires_at,
        created_at: pub.created_at,
      };
    },
    async listKeys(project, manager) {
      const rows = await ctx.store.listKeys(project.id);
      return { items: rows.filter((row) => withinReach(manager, row)).map(publicKey) };
    },
    async revokeKey(project, id, manager) {
      const target = (await ctx.store.listKeys(project.id)).find((row) => row.id === id);
      if (target !== undefined && !withinReach(manager, target)) throw beyondReach('API key', id);
      const row = await ctx.store.revokeKey(project.id, id);
      if (row === undefined) throw problem('not_found', 'noKey', { id });
      ctx.auth.evict(`key:${row.prefix}`);
      return publicKey(row);
    },
    async createClient(project, input, creator) {
      const limits = delegate(creator, input, input.scopes);
      return clients.create(project.id, { ...limits, name: input.name, redirect_uris: input.redirect_uris });
    },
    async listClients(project, manager) {
      return { items: (await clients.list(project.id)).filter((client) => withinReach(manager, client)) };
    },
    async deleteClient(project, id, manager) {
      const target = (await clients.list(project.id)).find((client) => client.client_id === id);
      if (target !== undefined && !withinReach(manager, target)) throw beyondReach('OAuth client', id);
      if (!(await clients.remove(project.id, id))) throw problem('not_found', 'noClient', { id });
      return { client_id: id, deleted: true };
    },
  };
}

/** /v1/me/usage, /v1/me/keys, /v1/me/oauth/clients. */
export function meProjectRoutes(app: FastifyInstance, ctx: GatewayContext, h: ProjectHandlers): void {
  const route = (
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    scope: Scope,
    operationId: string,
    summary: string,
    extra: Record<string, unknown>,
    fn: (project: Project, req: FastifyRequest, creator: Principal) => Promise<unknown>,
    status = 200,
  ): void => {
    app.route({
      method,
      url,
      schema: { operationId, summary, tags: ['project'], security: security(scope), ...extra },
      // Before the body is read: an unauthenticated caller cannot make the gateway receive a body.
      onRequest: authenticateFirst(async (request) => {
        request.principal = await authenticate(ctx, request, scope);
      }),
      handler: guarded(async (request: FastifyRequest, reply: FastifyReply) => {
        const p = principalOf(request);
        return reply.code(status).send(await fn(p.project, request, p));
      }),
    });
  };
  const id = (req: FastifyRequest): string => (req.params as { id: string }).id;

  route(
    'GET',
    '/v1/me/usage',
    'project:read',
    'getUsage',
    'Usage against quotas this month',
    answers({ 200: UsageSchema }, CREDENTIAL_ROUTE),
    (project) => h.usage(project),
  );
  route(
    'POST',
    '/v1/me/keys',
    'project:write',
    'createKey',
    'Create an API key (the secret is shown only here)',
    { body: KeyCreateBody, ...answers({ 201: KeyCreated }, CREDENTIAL_ROUTE) },
    (project, req, creator) => h.createKey(project, req.body as KeyInput, creator),
    201,
  );
  route(
    'GET',
    '/v1/me/keys',
    'project:write',
    'listKeys',
    'List API keys',
    answers({ 200: Open }, CREDENTIAL_ROUTE),
    (project, _req, manager) => h.listKeys(project, manager),
  );
  route(
    'DELETE',
    '/v1/me/keys/:id',
    'project:write',
    'revokeKey',
    'Revoke an API key (at once)',
    { params: IdParam, ...answers({ 200: Open }, CREDENTIAL_ROUTE) },
    (project, req, manager) => h.revokeKey(project, id(req), manager),
  );
  route(
    'POST',
    '/v1/me/oauth/clients',
    'project:write',
    'createOAuthClient',
    'Create an OAuth client (the secret is shown only here)',
    { body: ClientBody, ...answers({ 201: Open }, CREDENTIAL_ROUTE) },
    (project, req, creator) => h.createClient(project, req.body as ClientRequest, creator),
    201,
  );
  route(
    'GET',
    '/v1/me/oauth/clients',
    'project:write',
    'listOAuthClients',
    'List OAuth clients',
    answers({ 200: Open }, CREDENTIAL_ROUTE),
    (project, _req, manager) => h.listClients(project, manager),
  );
  route(
    'DELETE',
    '/v1/me/oauth/clients/:id',
    'project:write',
    'deleteOAuthClient',
    'Delete an OAuth client and its tokens',
    { params: IdParam, ...answers({ 200: Open }, CREDENTIAL_ROUTE) },
    (project, req, manager) => h.deleteClient(project, id(req), manager),
  );
}
