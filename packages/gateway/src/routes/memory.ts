// Memory paths: the /v1/me mirror of the engine's bank, memory, operation and space paths, and the description-level
// /v1/retain, /v1/recall, /v1/reflect. The tenant always comes from the credential, never from the request.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import type { GatewayContext } from '../context.js';
import { authenticateFirst } from '../early-auth.js';
import { authenticate, execute, guarded, seg, tenantPath } from '../proxy.js';
import { principalOf } from '../request-state.js';
import type { ProblemCode } from '@mnemos/problems';
import { answers, COUNTED, CREDENTIAL_ROUTE, FORWARDED, REFLECTS } from '../route-problems.js';
import type { Scope } from '../scopes.js';
import * as wire from '@mnemos/engine/wire';
import { Open } from '../schemas.js';
import {
  bankFilter,
  bankParam,
  bankPlan,
  bankQueryPlan,
  bankBodyPlan,
  entityPlan,
  bodyOf,
  importPlan,
  idParam,
  memoryPlan,
  operationFilter,
  queryOf,
  recallPlan,
  reflectPlan,
  retainPlan,
  spacePlan,
  withoutBankId,
  type PlanOf,
} from './memory-plans.js';

interface RouteSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  scope: Scope;
  operationId: string;
  summary: string;
  tags: string[];
  params?: TSchema;
  body?: TSchema;
  querystring?: TSchema;
  plan: PlanOf;
  /** The codes this operation answers beyond those of every forwarded call (quota, the engine's own). */
  problems?: readonly ProblemCode[];
  /** The body is taken as it comes (any media type, up to this many bytes) and forwarded raw (an import). */
  rawBodyLimit?: number;
}

/** The raw body of a route that takes one (see RouteSpec.rawBodyLimit); none sent is empty. */
const rawBodyOf = (req: FastifyRequest): Buffer => req.rawBody ?? Buffer.alloc(0);

export function security(scope: Scope): Array<Record<string, string[]>> {
  return [{ oauth2: [scope] }, { apiKey: [] }, { consoleSession: [], consoleProject: [] }];
}

export function memoryRoutes(app: FastifyInstance, ctx: GatewayContext): void {
  const specs: RouteSpec[] = [
    // Description-level operations (bank in the body).
    {
      method: 'POST',
      url: '/v1/retain',
      scope: 'memory:retain',
      operationId: 'retain',
      problems: [...COUNTED, 'too_many_memories'],
      tags: ['memory'],
      summary: 'Retain memories in a bank (bank_id in the body)',
      body: wire.RetainWithBankBody,
      plan: (p, req) => {
        const { bank, rest } = withoutBankId(bodyOf(req));
        return retainPlan(p, bank, rest);
      },
    },
    {
      method: 'POST',
      url: '/v1/recall',
      scope: 'memory:recall',
      operationId: 'recall',
      problems: COUNTED,
      tags: ['memory'],
      summary: 'Recall memories relevant to a query (bank_id in the body)',
      body: wire.RecallWithBankBody,
      plan: (p, req) => {
        const { bank, rest } = withoutBankId(bodyOf(req));
        return recallPlan(p, bank, rest);
      },
    },
    {
      method: 'POST',
      url: '/v1/reflect',
      scope: 'memory:reflect',
      operationId: 'reflect',
      problems: [...COUNTED, ...REFLECTS],
      tags: ['memory'],
      summary: 'Answer a question from memory, with citations (bank_id in the body)',
      body: wire.ReflectWithBankBody,
      plan: (p, req) => {
        const { bank, rest } = withoutBankId(bodyOf(req));
        return reflectPlan(p, bank, rest, req.headers.accept);
      },
    },

    // Bank paths.
    {
      method: 'POST',
      url: '/v1/me/banks/:bank/memories',
      scope: 'memory:retain',
      operationId: 'retainToBank',
      problems: [...COUNTED, 'too_many_memories'],
      tags: ['memory'],
      summary: 'Retain memories',
      params: wire.BankPath,
      body: wire.RetainBody,
      plan: (p, req) => retainPlan(p, bankParam(req), bodyOf(req)),
    },
    {
      method: 'POST',
      url: '/v1/me/banks/:bank/memories/recall',
      scope: 'memory:recall',
      operationId: 'recallFromBank',
      problems: COUNTED,
      tags: ['memory'],
      summary: 'Recall memories',
      params: wire.BankPath,
      body: wire.RecallBody,
      plan: (p, req) => recallPlan(p, bankParam(req), bodyOf(req)),
    },
    {
      method: 'POST',
      url: '/v1/me/banks/:bank/reflect',
      scope: 'memory:reflect',
      operationId: 'reflectOnBank',
      problems: [...COUNTED, ...REFLECTS],
      tags: ['memory'],
      summary: 'Reflect',
      params: wire.BankPath,
      body: wire.ReflectBody,
      plan: (p, req) => reflectPlan(p, bankParam(req), bodyOf(req), req.headers.accept),
    },
    {
      method: 'GET',
      url: '/v1/me/banks',
      scope: 'memory:recall',
      operationId: 'listBanks',
      tags: ['banks'],
      summary: 'List banks',
      querystring: wire.BankListQuery,
      plan: (p, req) => ({
        forward: { method: 'GET', path: tenantPath(p, '/banks'), query: queryOf(req) },
        transform: bankFilter(p),
      }),
    },
    {
      method: 'PUT',
      url: '/v1/me/banks/:bank',
      scope: 'memory:retain',
      operationId: 'putBank',
      tags: ['banks'],
      summary: 'Create or replace a bank profile',
      params: wire.BankPath,
      body: wire.BankBody,
      plan: bankPlan('PUT', '', true),
    },
    {
      method: 'GET',
      url: '/v1/me/banks/:bank',
      scope: 'memory:recall',
      operationId: 'getBank',
      problems: ['bank_not_found'],
      tags: ['banks'],
      summary: 'Get a bank profile',
      params: wire.BankPath,
      plan: bankPlan('GET', '', false),
    },
    {
      method: 'GET',
      url: '/v1/me/banks/:bank/profile',
      scope: 'memory:recall',
      operationId: 'getBankProfile',
      problems: ['bank_not_found'],
      tags: ['banks'],
      summary: 'Get a bank profile (Hindsight path)',
      params: wire.BankPath,
      plan: bankPlan('GET', '/profile', false),
    },
    {
      method: 'GET',
      url: '/v1/me/banks/:bank/stats',
      scope: 'memory:recall',
      operationId: 'getBankStats',
      problems: ['bank_not_found'],
      tags: ['banks'],
      summary: 'Bank statistics',
      params: wire.BankPath,
      plan: bankPlan('GET', '/stats', true),
    },
    {
      method: 'PATCH',
      url: '/v1/me/banks/:bank',
      scope: 'memory:retain',
      operationId: 'patchBank',
      problems: ['bank_not_found'],
      tags: ['banks'],
      summary: 'Edit a bank profile',
      params: wire.BankPath,
      body: wire.BankBody,
      plan: bankPlan('PATCH', '', true),
    },
    {
      method: 'DELETE',
      url: '/v1/me/banks/:bank',
      scope: 'memory:delete',
      operationId: 'deleteBank',
      problems: ['bank_not_found'],
      tags: ['banks'],
      summary: 'Erase a bank and everything derived from it',
      params: wire.BankPath,
      plan: bankPlan('DELETE', '', true),
    },
    {
      method: 'GET',
      url: '/v1/me/banks/:bank/memories',
      scope: 'memory:recall',
      operationId: 'listMemories',
      problems: ['bank_not_found'],
      tags: ['memories'],
      summary: 'List memories',
      params: wire.BankPath,
      querystring: wire.MemoryListQuery,
      plan: bankQueryPlan('GET', '/memories'),
    },
    {
      method: 'GET',
      url: '/v1/me/banks/:bank/memories/list',
      scope: 'memory:recall',
      operationId: 'listMemoriesCompat',
      problems: ['bank_not_found'],
      tags: ['memories'],
      summary: 'List memories (Hindsight path)',
      params: wire.BankPath,
      querystring: wire.MemoryListQuery,
      plan: bankQueryPlan('GET', '/memories/list'),
    },
    {
      method: 'POST',
      url: '/v1/me/banks/:bank/memories/delete',
      scope: 'memory:delete',
      operationId: 'deleteMatchingMemories',
      problems: ['bank_not_found'],
      tags: ['memories'],
      summary: 'Delete the memories a filter passes (dry_run: count them)',
      params: wire.BankPath,
      body: wire.BulkDeleteBody,
      plan: bankBodyPlan('/memories/delete'),
    },
    {
      method: 'POST',
      url: '/v1/me/banks/:bank/memories/update',
      scope: 'memory:retain',
      operationId: 'updateMatchingMemories',
      tags: ['memories'],
      summary: 'Set metadata, tags or state on the memories a filter passes or ids name',
      params: wire.BankPath,
      body: wire.BulkUpdateBody,
      plan: bankBodyPlan('/memories/update'),
    },
    {
      method: 'POST',
      url: '/v1/me/banks/:bank/memories/get',
      scope: 'memory:recall',
      operationId: 'getMemories',
      tags: ['memories'],
      summary: 'Get several memories by id, in the order asked',
      params: wire.BankPath,
      body: wire.BulkGetBody,
      plan: bankBodyPlan('/memories/get'),
    },
    {
      method: 'GET',
      url: '/v1/me/banks/:bank/export',
      scope: 'memory:recall',
      operationId: 'exportMemories',
      tags: ['memories'],
      summary: "Stream a bank's memories as NDJSON, one memory a line",
      params: wire.BankPath,
      querystring: wire.ExportQuery,
      plan: bankQueryPlan('GET', '/export'),
    },
    {
      method: 'POST',
      url: '/v1/me/banks/:bank/import',
      scope: 'memory:retain',
      operationId: 'importMemories',
      problems: [...COUNTED, 'payload_too_large'],
      tags: ['memories'],
      summary: 'Import memories: the lines of an export, or a mem0 get_all document (format=mem0)',
      params: wire.BankPath,
      querystring: wire.ImportQuery,
      rawBodyLimit: ctx.config.http.perConnectionBodyBytes,
      plan: importPlan(rawBodyOf),
    },
    {
      method: 'DELETE',
      url: '/v1/me/banks/:bank/memories',
      scope: 'memory:delete',
      operationId: 'deleteMemories',
      problems: ['bank_not_found'],
      tags: ['memories'],
      summary: 'Erase a selection of memories',
      params: wire.BankPath,
      querystring: wire.ClearQuery,
      plan: bankQueryPlan('DELETE', '/memories'),
    },
    {
      method: 'GET',
      url: '/v1/me/banks/:bank/memories/:id',
      scope: 'memory:recall',
      operationId: 'getMemory',
      problems: ['memory_not_found'],
      tags: ['memories'],
      summary: 'Get a memory',
      params: wire.MemoryPath,
      plan: memoryPlan(ctx, 'GET'),
    },
    {
      method: 'GET',
      url: '/v1/me/banks/:bank/memories/:id/history',
      scope: 'memory:recall',
      operationId: 'getMemoryHistory',
      problems: ['memory_not_found'],
      tags: ['memories'],
      summary: "A memory's versions, oldest first",
      params: wire.MemoryPath,
      plan: memoryPlan(ctx, 'GET', '/history'),
    },
    {
      method: 'GET',
      url: '/v1/me/banks/:bank/entities',
      scope: 'memory:recall',
      operationId: 'listEntities',
      problems: ['bank_not_found'],
      tags: ['entities'],
      summary: "List a bank's entities (paged by cursor; filter by name prefix)",
      params: wire.BankPath,
      querystring: wire.EntityListQuery,
      plan: bankQueryPlan('GET', '/entities'),
    },
    {
      method: 'GET',
      url: '/v1/me/banks/:bank/entities/:name',
      scope: 'memory:recall',
      operationId: 'getEntity',
      problems: ['entity_not_found'],
      tags: ['entities'],
      summary: 'An entity: its current facts and the timeline of their changes',
      params: wire.EntityPath,
      querystring: wire.EntityQuery,
      plan: entityPlan,
    },
    {
      method: 'PATCH',
      url: '/v1/me/banks/:bank/memories/:id',
      scope: 'memory:retain',
      operationId: 'patchMemory',
      problems: ['memory_not_found', 'duplicate_memory'],
      tags: ['memories'],
      summary: 'Edit or invalidate a memory',
      params: wire.MemoryPath,
      body: wire.MemoryPatchBody,
      plan: memoryPlan(ctx, 'PATCH'),
    },
    {
      method: 'DELETE',
      url: '/v1/me/banks/:bank/memories/:id',
      scope: 'memory:delete',
      operationId: 'deleteMemory',
      problems: ['memory_not_found'],
      tags: ['memories'],
      summary: 'Hard-delete a memory',
      params: wire.MemoryPath,
      plan: memoryPlan(ctx, 'DELETE'),
    },
    {
      method: 'GET',
      url: '/v1/me/operations/:id',
      scope: 'memory:retain',
      operationId: 'getOperation',
      problems: ['operation_not_found'],
      tags: ['memory'],
      summary: 'Status of an async retain',
      params: wire.OperationPath,
      plan: (p, req) => ({
        forward: { method: 'GET', path: tenantPath(p, `/operations/${seg(idParam(req))}`) },
        transform: operationFilter(p, idParam(req)),
      }),
    },

    // Space (org) memory.
    {
      method: 'POST',
      url: '/v1/me/spaces/:space/memories',
      scope: 'memory:retain',
      operationId: 'retainToSpace',
      problems: [...COUNTED, 'too_many_memories'],
      tags: ['spaces'],
      summary: "Retain into a space's org memory",
      params: wire.SpacePath,
      body: wire.RetainBody,
      plan: spacePlan('memories', '/memories'),
    },
    {
      method: 'POST',
      url: '/v1/me/spaces/:space/memories/recall',
      scope: 'memory:recall',
      operationId: 'recallFromSpace',
      problems: COUNTED,
      tags: ['spaces'],
      summary: "Recall from a space's org memory",
      params: wire.SpacePath,
      body: wire.RecallBody,
      plan: spacePlan('recalls', '/memories/recall'),
    },
  ];

  // Hindsight clients address the self-hosted tenant `/v1/default/...`; through the gateway that is the caller's
  // project too (same routes, hidden from the OpenAPI document).
  const aliases = specs
    .filter((s) => s.url.startsWith('/v1/me/'))
    .map((s) => ({ ...s, url: s.url.replace('/v1/me/', '/v1/default/'), alias: true }));
  for (const spec of [...specs, ...aliases]) {
    const schema: Record<string, unknown> = {
      operationId: spec.operationId,
      summary: spec.summary,
      tags: spec.tags,
      security: security(spec.scope),
      ...answers({ 200: { description: 'Success', ...Open } }, [
        ...CREDENTIAL_ROUTE,
        ...FORWARDED,
        ...(spec.problems ?? []),
      ]),
    };
    if ('alias' in spec) {
      schema['hide'] = true;
      delete schema['operationId'];
    }
    if (spec.params !== undefined) schema['params'] = spec.params;
    if (spec.body !== undefined) schema['body'] = spec.body;
    if (spec.querystring !== undefined) schema['querystring'] = spec.querystring;
    const limit = spec.rawBodyLimit;
    if (limit !== undefined) {
      void app.register(async (scope) => {
        scope.removeAllContentTypeParsers();
        scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: limit }, (req, body, done) => {
          req.rawBody = Buffer.isBuffer(body) ? body : Buffer.from(body);
          done(null, undefined);
        });
        route(scope, spec, schema, limit);
      });
    } else {
      route(app, spec, schema);
    }
  }

  function route(target: FastifyInstance, spec: RouteSpec, schema: Record<string, unknown>, bodyLimit?: number): void {
    target.route({
      ...(bodyLimit === undefined ? {} : { bodyLimit }),
      method: spec.method,
      url: spec.url,
      schema,
      // Authentication runs before the body is read: an anonymous caller can neither make the gateway receive a body
      // nor learn anything about the input rules.
      onRequest: authenticateFirst(async (request: FastifyRequest) => {
        request.principal = await authenticate(ctx, request, spec.scope);
      }),
      handler: guarded(async (request: FastifyRequest, reply: FastifyReply) => {
        const principal = principalOf(request);
        const plan = await spec.plan(principal, request);
        return execute(ctx, request, reply, principal, plan);
      }),
    });
  }
}
