// The plans of the memory routes (routes/memory.ts): what a credential's bank and space limits allow of a request, and
// the call forwarded to the engine for it (path, body, query, quota metric, and the filtering of its answer).
import type { FastifyRequest } from 'fastify';
import { orgBank, requireBank, requireOrg, requireSpace, type Principal } from '../auth.js';
import type { GatewayContext } from '../context.js';
import { Engines, type EngineResponse } from '../engine.js';
import { seg, tenantPath, type Plan } from '../proxy.js';
import { problem } from '@mnemos/problems';
import { estimateStored } from '../retain-estimate.js';

type Body = Record<string, unknown>;
type Query = Record<string, string | string[]>;

/** The plan of a route's request, for the caller it authenticated. */
export type PlanOf = (p: Principal, req: FastifyRequest) => Promise<Plan> | Plan;

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

export function retainPlan(p: Principal, bank: string, body: Body): Plan {
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

export function recallPlan(p: Principal, bank: string, body: Body): Plan {
  requireBank(p, bank);
  checkIncludeOrg(p, body);
  return {
    metric: 'recalls',
    forward: { method: 'POST', path: tenantPath(p, `/banks/${seg(bank)}/memories/recall`), body: withSpace(p, body) },
  };
}

/** A streamed reflect (`Accept: text/event-stream`) is asked of the engine as a stream and passed on as it comes. */
export function reflectPlan(p: Principal, bank: string, body: Body, accept: string | undefined): Plan {
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

export function withoutBankId(body: Body): { bank: string; rest: Body } {
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
export function bankFilter(p: Principal): ((res: EngineResponse) => Promise<EngineResponse>) | undefined {
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
export function operationFilter(
  p: Principal,
  id: string,
): ((res: EngineResponse) => Promise<EngineResponse>) | undefined {
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

export const bankParam = (req: FastifyRequest): string => (req.params as { bank: string }).bank;
export const idParam = (req: FastifyRequest): string => (req.params as { id: string }).id;
export const bodyOf = (req: FastifyRequest): Body => (req.body ?? {}) as Body;
export const queryOf = (req: FastifyRequest): Query => (req.query ?? {}) as Query;

/** Forwards a call on the bank's memories whose only input is the query (a list, an erase by filter). */
export const bankQueryPlan =
  (method: 'GET' | 'DELETE', suffix: string): PlanOf =>
  (p, req) => {
    requireBank(p, bankParam(req));
    const path = tenantPath(p, `/banks/${seg(bankParam(req))}${suffix}`);
    return { forward: { method, path, query: queryWithSpace(p, queryOf(req)) } };
  };

/**
 * Forwards a call on one bank's profile or statistics. A `bankWide` call (the whole bank, not the caller's spaces of
 * it) is refused to a space-limited credential.
 */
export const bankPlan =
  (method: 'GET' | 'PUT' | 'PATCH' | 'DELETE', suffix: string, bankWide: boolean): PlanOf =>
  (p, req) => {
    requireBank(p, bankParam(req));
    if (bankWide) noBankWideForSpaceLimited(p);
    const path = tenantPath(p, `/banks/${seg(bankParam(req))}${suffix}`);
    return { forward: { method, path, body: method === 'PUT' || method === 'PATCH' ? bodyOf(req) : undefined } };
  };

/**
 * Forwards a call on the bank's memories whose input is a body (a delete or update by filter, a get by ids); a
 * space-limited credential reaches only the space the body names (default: `default`).
 */
export const bankBodyPlan =
  (suffix: string): PlanOf =>
  (p, req) => {
    requireBank(p, bankParam(req));
    const path = tenantPath(p, `/banks/${seg(bankParam(req))}${suffix}`);
    return { forward: { method: 'POST', path, body: withSpace(p, bodyOf(req)) } };
  };

/** The lines of an import body that are memories (not blank), or a mem0 document's memories: its quota units. */
export function importCount(body: Buffer, format: unknown): number {
  const text = body.toString('utf8');
  if (format !== 'mem0') return text.split('\n').filter((line) => line.trim() !== '').length;
  try {
    const document: unknown = JSON.parse(text);
    const results = Array.isArray(document) ? document : (document as Body | null)?.['results'];
    return Array.isArray(results) ? results.length : 0;
  } catch {
    return 0;
  }
}

/** The memories an import answer says it stored. */
function importedCount(answer: unknown): number {
  const n = answer !== null && typeof answer === 'object' ? (answer as Body)['imported'] : undefined;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : 0;
}

/**
 * Forwards an import as it came (its raw body): quota units are reserved for each memory it holds, as for a retain,
 * and settled to the number the engine imported. A space-limited credential imports into one of its spaces only.
 */
export const importPlan =
  (bodyOfImport: (req: FastifyRequest) => Buffer): PlanOf =>
  (p, req) => {
    requireBank(p, bankParam(req));
    const body = bodyOfImport(req);
    const query = queryWithSpace(p, queryOf(req));
    let imported = 0;
    return {
      charges: [{ metric: 'memories', amount: importCount(body, query['format']), counted: () => imported }],
      forward: {
        method: 'POST',
        path: tenantPath(p, `/banks/${seg(bankParam(req))}/import`),
        query,
        rawBody: body,
        contentType: req.headers['content-type'] ?? 'application/x-ndjson',
      },
      transform: async (res) => {
        const answer = await Engines.json(res);
        imported = importedCount(answer);
        return Engines.fromJson(res.status, res.headers, answer);
      },
    };
  };

/** Forwards a look-up of one entity; a space-limited credential sees only the memories of its space. */
export const entityPlan: PlanOf = (p, req) => {
  requireBank(p, bankParam(req));
  const name = (req.params as { name: string }).name;
  const path = tenantPath(p, `/banks/${seg(bankParam(req))}/entities/${seg(name)}`);
  return { forward: { method: 'GET', path, query: queryWithSpace(p, queryOf(req)) } };
};

/** Forwards a call on one memory (or on `suffix` under it), once a space-limited credential is shown to reach it. */
export const memoryPlan =
  (ctx: GatewayContext, method: 'GET' | 'PATCH' | 'DELETE', suffix = ''): PlanOf =>
  async (p, req) => {
    requireBank(p, bankParam(req));
    await checkMemorySpace(ctx, p, bankParam(req), idParam(req));
    const path = tenantPath(p, `/banks/${seg(bankParam(req))}/memories/${seg(idParam(req))}${suffix}`);
    return { forward: { method, path, body: method === 'PATCH' ? bodyOf(req) : undefined } };
  };

/** Forwards a retain or recall on a space's org memory, which the credential reaches through its space and org bank. */
export const spacePlan =
  (metric: 'memories' | 'recalls', suffix: string): PlanOf =>
  (p, req) => {
    const space = (req.params as { space: string }).space;
    requireSpace(p, space);
    requireOrg(p, space);
    return {
      metric,
      amount: metric === 'memories' ? retainCount(bodyOf(req)) : undefined,
      forward: { method: 'POST', path: tenantPath(p, `/spaces/${seg(space)}${suffix}`), body: bodyOf(req) },
    };
  };
