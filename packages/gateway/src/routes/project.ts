// Project management: usage, API keys and OAuth clients, under /v1/me (scopes project:read / project:write) and under
// /admin/projects/{id} (admin token). Both share the handlers below.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { GatewayContext } from '../context.js';
import type { ProjectClients } from '../oauth/clients.js';
import { authenticate, guarded, hookGuard } from '../proxy.js';
import { HttpProblem, notFound } from '../problem.js';
import { SCOPES, type Scope } from '../scopes.js';
import { publicKey, type KeyInput, type Project } from '../store.js';
import { ClientCreateBody, KeyCreateBody, KeyCreated, Open, UsageSchema } from '../schemas.js';
import { security } from './memory.js';

const IdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }) });
const problems = { 400: { $ref: 'Problem#' }, 401: { $ref: 'Problem#' }, 403: { $ref: 'Problem#' }, 404: { $ref: 'Problem#' } };

export interface ProjectHandlers {
  usage(project: Project): Promise<unknown>;
  createKey(project: Project, input: KeyInput, creatorScopes: ReadonlySet<string> | null): Promise<unknown>;
  listKeys(project: Project): Promise<unknown>;
  revokeKey(project: Project, id: string): Promise<unknown>;
  createClient(project: Project, input: { name: string; scopes: Scope[]; redirect_uris?: string[] }, creatorScopes: ReadonlySet<string> | null): Promise<unknown>;
  listClients(project: Project): Promise<unknown>;
  deleteClient(project: Project, id: string): Promise<unknown>;
}

export function projectHandlers(ctx: GatewayContext, clients: ProjectClients): ProjectHandlers {
  /** A credential can hand out only scopes it has itself (no escalation through key creation). */
  const checkSubset = (scopes: readonly string[], creator: ReadonlySet<string> | null): void => {
    if (creator === null) return;
    const extra = scopes.filter((s) => !creator.has(s));
    if (extra.length > 0) {
      throw new HttpProblem(403, 'insufficient_scope', `A credential can only grant scopes it holds itself; it lacks ${extra.join(', ')}.`);
    }
  };
  return {
    async usage(project) {
      // This gateway's counts are written first, so a single gateway reports exactly; see docs/gateway.md for several.
      await ctx.quotas.sync(project.id);
      return ctx.store.usage(project, new Date());
    },
    async createKey(project, input, creatorScopes) {
      const scopes = input.scopes ?? (creatorScopes === null ? [...SCOPES] : SCOPES.filter((s) => creatorScopes.has(s)));
      checkSubset(scopes, creatorScopes);
      if (input.expires_at !== undefined && Date.parse(input.expires_at) <= Date.now()) {
        throw new HttpProblem(400, 'validation_failed', 'expires_at must be in the future.', { errors: [{ pointer: '/body/expires_at', detail: 'must be in the future' }] });
      }
      const { key, row } = await ctx.store.createKey(project.id, { ...input, scopes }, SCOPES);
      const pub = publicKey(row);
      return { id: pub.id, key, prefix: pub.prefix, scopes: pub.scopes, banks: pub.banks, spaces: pub.spaces, expires_at: pub.expires_at, created_at: pub.created_at };
    },
    async listKeys(project) {
      return { items: (await ctx.store.listKeys(project.id)).map(publicKey) };
    },
    async revokeKey(project, id) {
      const row = await ctx.store.revokeKey(project.id, id);
      if (row === undefined) throw notFound(`No API key "${id}" in this project.`);
      ctx.auth.evict(`key:${row.prefix}`);
      return publicKey(row);
    },
    async createClient(project, input, creatorScopes) {
      checkSubset(input.scopes, creatorScopes);
      return clients.create(project.id, input);
    },
    async listClients(project) {
      return { items: await clients.list(project.id) };
    },
    async deleteClient(project, id) {
      if (!(await clients.remove(project.id, id))) throw notFound(`No OAuth client "${id}" in this project.`);
      return { client_id: id, deleted: true };
    },
  };
}

/** /v1/me/usage, /v1/me/keys, /v1/me/oauth/clients. */
export function meProjectRoutes(app: FastifyInstance, ctx: GatewayContext, h: ProjectHandlers): void {
  const route = (
    method: 'GET' | 'POST' | 'DELETE', url: string, scope: Scope, operationId: string, summary: string,
    extra: Record<string, unknown>, fn: (project: Project, req: FastifyRequest, scopes: ReadonlySet<string>) => Promise<unknown>, status = 200,
  ): void => {
    app.route({
      method, url,
      schema: { operationId, summary, tags: ['project'], security: security(scope), ...extra },
      preValidation: hookGuard(async (request) => {
        const p = await authenticate(ctx, request, scope);
        principalOf.set(request, { project: p.project, scopes: p.scopes });
      }),
      handler: guarded(async (request: FastifyRequest, reply: FastifyReply) => {
        const p = principalOf.get(request);
        if (p === undefined) throw new HttpProblem(401, 'unauthorized', 'Not authenticated.');
        return reply.code(status).send(await fn(p.project, request, p.scopes));
      }),
    });
  };
  const principalOf = new WeakMap<FastifyRequest, { project: Project; scopes: ReadonlySet<string> }>();
  const id = (req: FastifyRequest): string => (req.params as { id: string }).id;

  route('GET', '/v1/me/usage', 'project:read', 'getUsage', 'Usage against quotas this month', { response: { 200: UsageSchema, ...problems } },
    (project) => h.usage(project));
  route('POST', '/v1/me/keys', 'project:write', 'createKey', 'Create an API key (the secret is shown only here)',
    { body: KeyCreateBody, response: { 201: KeyCreated, ...problems } },
    (project, req, scopes) => h.createKey(project, req.body as KeyInput, scopes), 201);
  route('GET', '/v1/me/keys', 'project:write', 'listKeys', 'List API keys', { response: { 200: Open, ...problems } },
    (project) => h.listKeys(project));
  route('DELETE', '/v1/me/keys/:id', 'project:write', 'revokeKey', 'Revoke an API key (at once)', { params: IdParam, response: { 200: Open, ...problems } },
    (project, req) => h.revokeKey(project, id(req)));
  route('POST', '/v1/me/oauth/clients', 'project:write', 'createOAuthClient', 'Create an OAuth client (the secret is shown only here)',
    { body: ClientCreateBody, response: { 201: Open, ...problems } },
    (project, req, scopes) => h.createClient(project, req.body as { name: string; scopes: Scope[]; redirect_uris?: string[] }, scopes), 201);
  route('GET', '/v1/me/oauth/clients', 'project:write', 'listOAuthClients', 'List OAuth clients', { response: { 200: Open, ...problems } },
    (project) => h.listClients(project));
  route('DELETE', '/v1/me/oauth/clients/:id', 'project:write', 'deleteOAuthClient', 'Delete an OAuth client and its tokens',
    { params: IdParam, response: { 200: Open, ...problems } }, (project, req) => h.deleteClient(project, id(req)));
}
