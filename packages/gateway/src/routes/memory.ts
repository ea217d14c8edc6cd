// Memory paths: the /v1/me mirror of the engine's bank, memory, operation and space paths, and the description-level
// /v1/retain, /v1/recall, /v1/reflect. The tenant always comes from the credential, never from the request.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import { orgBank, requireBank, requireOrg, requireSpace, type Principal } from '../auth.js';
import type { GatewayContext } from '../context.js';
import { Engines, type EngineResponse } from '../engine.js';
import { authenticateFirst } from '../early-auth.js';
import { authenticate, execute, guarded, seg, tenantPath, type Plan } from '../proxy.js';
import { problem, type ProblemCode } from '@mnemos/problems';
import { answers, COUNTED, CREDENTIAL_ROUTE, FORWARDED, REFLECTS } from '../route-problems.js';
import type { Scope } from '../scopes.js';
import { estimateStored } from '../retain-estimate.js';
import * as wire from '@mnemos/engine/wire';
import { Open } from '../schemas.js';

type Body = Record<string, unknown>;
type Query = Record<string, string | string[]>;

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
  plan: (p: Principal, req: FastifyRequest) => Promise<Plan> | Plan;
  /** The codes this operation answers beyond those of every forwarded call (quota, the engine's own). */
  problems?: readonly ProblemCode[];
}

export function security(scope: Scope): Array<Record<string, string[]>> {
  return [{ oauth2: [scope] }, { apiKey: [] }, { consoleSession: [], consoleProject: [] }];
}

const spaceOf = (v: unknown): string => (typeof v === 'string' && v.length > 0 ? v : 'default');

/** Space limits of a credential apply to the body's space and each item's. */
function checkBodySpaces(p: Principal, body: Body): void {
  if (p.spaces === null) return;
  requireSpace(p, spaceOf(body['space']));
  const items = body['items'];
  if (Array.isArray(items)) {
    for (const item of items) {
      if (item !== null && typeof item === 'object' && 'space' in item)
        requireSpace(p, spaceOf((item as Body)['space']));
    }
  }
}

/** For space-limited credentials the space is always explicit when forwarded. */
function withSpace(p: Principal, body: Body): Body {
  checkBodySpaces(p, body);
  return p.spaces === null ? body : { ...body, space: spaceOf(body['space']) };
}

function queryWithSpace(p: Principal, query: Query): Query {
  if (p.spaces === null) return query;
  const space = typeof query['space'] === 'string' ? query['space'] : 'default';
  requireSpace(p, space);
  return { ...query, space };
}

/** Quota units reserved for a retain: an upper bound of the memories it stores, settled to what the engine stored. */
function retainCount(body: Body): number {
  if (Array.isArray(body['items']) || Array.isArray(body['messages']) || typeof body['content'] === 'string') {
    return estimateStored(body);
  }
  throw problem('validation_failed', 'retainWithoutContent', {
    errors: [{ pointer: '/content', detail: 'is required when items and messages are absent' }],
  });
}

function retainPlan(p: Principal, bank: string, body: Body): Plan {
  requireBank(p, bank);
  const amount = retainCount(body);
  return {
    metric: 'memories',
    amount,
    forward: { method: 'POST', path: tenantPath(p, `/banks/${seg(bank)}/memories`), body: withSpace(p, body) },
  };
}

/** A recall that blends in org memory (`include_org`) reads the space's org memory too. */
export function checkIncludeOrg(p: Principal, args: Body): void {
  if (args['include_org'] === true) requireOrg(p, spaceOf(args['space']));
}

function recallPlan(p: Principal, bank: string, body: Body): Plan {
  requireBank(p, bank);
  checkIncludeOrg(p, body);
  return {
    metric: 'recalls',
    forward: { method: 'POST', path: tenantPath(p, `/banks/${seg(bank)}/memories/recall`), body: withSpace(p, body) },
  };
}

/** A streamed reflect (`Accept: text/event-stream`) is asked of the engine as a stream and passed on as it comes. */
function reflectPlan(p: Principal, bank: string, body: Body, accept: string | undefined): Plan {
  requireBank(p, bank);
  const stream = accept !== undefined && accept.toLowerCase().includes('text/event-stream');
  return {
    metric: 'reflects',
    forward: {
      method: 'POST',
      path: tenantPath(p, `/banks/${seg(bank)}/reflect`),
      body: withSpace(p, body),
      ...(stream ? { accept: 'text/event-stream' } : {}),
    },
  };
}

function withoutBankId(body: Body): { bank: string; rest: Body } {
  const { bank_id: bank, ...rest } = body;
  return { bank: String(bank), rest };
}

/** Space-limited credentials may touch a single memory only if it lies in one of their spaces. */
async function checkMemorySpace(ctx: GatewayContext, p: Principal, bank: string, id: string): Promise<void> {
  if (p.spaces === null) return;
  const res = await ctx.engines.forward(p.project.engine, {
    method: 'GET',
    path: tenantPath(p, `/banks/${seg(bank)}/memories/${seg(id)}`),
  });
  const memory = await Engines.json(res);
  const space = memory !== null && typeof memory === 'object' ? (memory as Body)['space'] : undefined;
  if (res.status >= 400 || typeof space !== 'string' || !p.spaces.has(space)) {
    throw problem('memory_not_found', 'notVisible', { id, bankId: bank });
  }
}

function noBankWideForSpaceLimited(p: Principal): void {
  if (p.spaces !== null) {
    throw problem('forbidden', 'bankWideWithSpaces');
  }
}

/** Keeps the banks of a listing a bank- or space-limited credential may see (MCP list_banks too). */
export function visibleBanks(p: Principal, listing: Body): Body {
  if ((p.banks === null && p.spaces === null) || !Array.isArray(listing['banks'])) return listing;
  const banks = (listing['banks'] as unknown[]).filter((b) => {
    const entry = b !== null && typeof b === 'object' ? (b as Body) : {};
    const id = typeof b === 'string' ? b : (entry['bank_id'] ?? entry['id']);
    const inBanks = p.banks === null || (typeof id === 'string' && p.banks.has(id));
    const inSpaces = p.spaces === null || p.spaces.has(spaceOf(entry['space']));
    return inBanks && inSpaces;
  });
  return { ...listing, banks, total: banks.length };
}

/** Filters a bank listing down to the banks a limited credential may see. */
function bankFilter(p: Principal): ((res: EngineResponse) => Promise<EngineResponse>) | undefined {
  if (p.banks === null && p.spaces === null) return undefined;
  return async (res) => {
    const data = await Engines.json(res);
    const listing = data !== null && typeof data === 'object' ? visibleBanks(p, data as Body) : data;
    return Engines.fromJson(res.status, res.headers, listing);
  };
}

/**
 * An operation's status is visible to a limited credential only if the operation's bank and space are within its
 * limits (the engine's answer names both; org memory is the bank "org:<space>"); otherwise it does not exist for it.
 */
function operationFilter(p: Principal, id: string): ((res: EngineResponse) => Promise<EngineResponse>) | undefined {
  if (p.banks === null && p.spaces === null) return undefined;
  return async (res) => {
    const data = await Engines.json(res);
    const op = data !== null && typeof data === 'object' ? (data as Body) : {};
    const space = spaceOf(op['space']);
    const bank = op['bank_id'] === '' ? orgBank(space) : op['bank_id'];
    const bankAllowed = typeof bank === 'string' && (p.banks === null || p.banks.has(bank));
    if (!bankAllowed || (p.spaces !== null && !p.spaces.has(space))) {
      throw problem('operation_not_found', 'notVisible', { id });
    }
    return Engines.fromJson(res.status, res.headers, data);
  };
}

export const principals = new WeakMap<FastifyRequest, Principal>();

export function memoryRoutes(app: FastifyInstance, ctx: GatewayContext): void {
  const bankParam = (req: FastifyRequest): string => (req.params as { bank: string }).bank;
  const idParam = (req: FastifyRequest): string => (req.params as { id: string }).id;
  const body = (req: FastifyRequest): Body => (req.body ?? {}) as Body;
  const query = (req: FastifyRequest): Query => (req.query ?? {}) as Query;

  /** Forwards a call on the bank's memories whose only input is the query (a list, an erase by filter). */
  const bankQueryPlan =
    (method: 'GET' | 'DELETE', suffix: string): RouteSpec['plan'] =>
    (p, req) => {
      requireBank(p, bankParam(req));
      const path = tenantPath(p, `/banks/${seg(bankParam(req))}${suffix}`);
      return { forward: { method, path, query: queryWithSpace(p, query(req)) } };
    };

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
        const { bank, rest } = withoutBankId(body(req));
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
        const { bank, rest } = withoutBankId(body(req));
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
        const { bank, rest } = withoutBankId(body(req));
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
      plan: (p, req) => retainPlan(p, bankParam(req), body(req)),
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
      plan: (p, req) => recallPlan(p, bankParam(req), body(req)),
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
      plan: (p, req) => reflectPlan(p, bankParam(req), body(req), req.headers.accept),
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
        forward: { method: 'GET', path: tenantPath(p, '/banks'), query: query(req) },
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
      plan: (p, req) => {
        requireBank(p, bankParam(req));
        noBankWideForSpaceLimited(p);
        return { forward: { method: 'PUT', path: tenantPath(p, `/banks/${seg(bankParam(req))}`), body: body(req) } };
      },
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
      plan: (p, req) => {
        requireBank(p, bankParam(req));
        return { forward: { method: 'GET', path: tenantPath(p, `/banks/${seg(bankParam(req))}`) } };
      },
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
      plan: (p, req) => {
        requireBank(p, bankParam(req));
        return { forward: { method: 'GET', path: tenantPath(p, `/banks/${seg(bankParam(req))}/profile`) } };
      },
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
      plan: (p, req) => {
        requireBank(p, bankParam(req));
        noBankWideForSpaceLimited(p);
        return { forward: { method: 'GET', path: tenantPath(p, `/banks/${seg(bankParam(req))}/stats`) } };
      },
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
      plan: (p, req) => {
        requireBank(p, bankParam(req));
        noBankWideForSpaceLimited(p);
        return { forward: { method: 'PATCH', path: tenantPath(p, `/banks/${seg(bankParam(req))}`), body: body(req) } };
      },
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
      plan: (p, req) => {
        requireBank(p, bankParam(req));
        noBankWideForSpaceLimited(p);
        return { forward: { method: 'DELETE', path: tenantPath(p, `/banks/${seg(bankParam(req))}`) } };
      },
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
      plan: (p, req) => {
        const bank = bankParam(req);
        requireBank(p, bank);
        const path = tenantPath(p, `/banks/${seg(bank)}/memories/delete`);
        return { forward: { method: 'POST', path, body: withSpace(p, body(req)) } };
      },
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
      plan: async (p, req) => {
        requireBank(p, bankParam(req));
        await checkMemorySpace(ctx, p, bankParam(req), idParam(req));
        return {
          forward: {
            method: 'GET',
            path: tenantPath(p, `/banks/${seg(bankParam(req))}/memories/${seg(idParam(req))}`),
          },
        };
      },
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
      plan: async (p, req) => {
        requireBank(p, bankParam(req));
        await checkMemorySpace(ctx, p, bankParam(req), idParam(req));
        return {
          forward: {
            method: 'PATCH',
            path: tenantPath(p, `/banks/${seg(bankParam(req))}/memories/${seg(idParam(req))}`),
            body: body(req),
          },
        };
      },
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
      plan: async (p, req) => {
        requireBank(p, bankParam(req));
        await checkMemorySpace(ctx, p, bankParam(req), idParam(req));
        return {
          forward: {
            method: 'DELETE',
            path: tenantPath(p, `/banks/${seg(bankParam(req))}/memories/${seg(idParam(req))}`),
          },
        };
      },
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
      plan: (p, req) => {
        const space = (req.params as { space: string }).space;
        requireSpace(p, space);
        requireOrg(p, space);
        return {
          metric: 'memories',
          amount: retainCount(body(req)),
          forward: { method: 'POST', path: tenantPath(p, `/spaces/${seg(space)}/memories`), body: body(req) },
        };
      },
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
      plan: (p, req) => {
        const space = (req.params as { space: string }).space;
        requireSpace(p, space);
        requireOrg(p, space);
        return {
          metric: 'recalls',
          forward: { method: 'POST', path: tenantPath(p, `/spaces/${seg(space)}/memories/recall`), body: body(req) },
        };
      },
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
    app.route({
      method: spec.method,
      url: spec.url,
      schema,
      // Authentication runs before the body is read: an anonymous caller can neither make the gateway receive a body
      // nor learn anything about the input rules.
      onRequest: authenticateFirst(async (request: FastifyRequest) => {
        principals.set(request, await authenticate(ctx, request, spec.scope));
      }),
      handler: guarded(async (request: FastifyRequest, reply: FastifyReply) => {
        const principal = principals.get(request);
        if (principal === undefined) throw problem('unauthorized', 'unauthenticated');
        const plan = await spec.plan(principal, request);
        return execute(ctx, request, reply, principal, plan);
      }),
    });
  }
}
