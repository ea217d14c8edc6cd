// MCP through the gateway: /mcp and /mcp/{bank} forward (streamable HTTP, answers streamed back) to the engine's
// /v1/{tenant}/mcp after checking the `mcp` scope plus each called tool's own scope, bank and space limits, and quota.
// Discovery: a 401 names the protected-resource metadata (RFC 9728), which points MCP clients at the authorization
// server, where they can register dynamically.
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requireBank, requireOrg, requireScope, requireSpace, type Principal } from './auth.js';
import type { GatewayContext } from './context.js';
import { Engines, MAX_NEW_MEMORIES_HEADER, type EngineResponse } from './engine.js';
import { rewriteToolResults, rpcKey, storedCounts, succeededCalls } from './mcp-results.js';
import { authenticateFirst } from './early-auth.js';
import { authenticate, execute, guarded, seg, tenantPath, type Charge } from './proxy.js';
import { principalOf } from './request-state.js';
import { piecesOf } from './retain-estimate.js';
import { problem, Problem } from '@mnemos/problems';
import { MCP_CLIENT_SCOPES } from './oauth/client-scopes.js';
import { visibleBanks } from './routes/memory-plans.js';
import type { Metric } from './plans.js';
import { SCOPES, type Scope } from './scopes.js';
import { BANK_ID_PATTERN } from '@mnemos/engine/wire';

const TOOL_SCOPES: Record<string, { scope: Scope; metric?: Metric }> = {
  retain: { scope: 'memory:retain', metric: 'memories' },
  recall: { scope: 'memory:recall', metric: 'recalls' },
  reflect: { scope: 'memory:reflect', metric: 'reflects' },
  list_memories: { scope: 'memory:recall' },
  list_banks: { scope: 'memory:recall' },
  entity: { scope: 'memory:recall' },
  delete_memory: { scope: 'memory:delete' },
  delete_memories: { scope: 'memory:delete' },
};

type Json = Record<string, unknown>;

interface ToolCall {
  /** The JSON-RPC id, as rpcKey. */
  id: string;
  name: string;
  args: Json;
}

function toolCalls(body: unknown): ToolCall[] {
  const messages = Array.isArray(body) ? body : [body];
  const calls: ToolCall[] = [];
  for (const m of messages) {
    if (m === null || typeof m !== 'object' || (m as Json)['method'] !== 'tools/call') continue;
    const params = (m as Json)['params'];
    const name = params !== null && typeof params === 'object' ? (params as Json)['name'] : undefined;
    const args = params !== null && typeof params === 'object' ? (params as Json)['arguments'] : undefined;
    calls.push({
      id: rpcKey((m as Json)['id']),
      name: typeof name === 'string' ? name : '',
      args: args !== null && typeof args === 'object' ? (args as Json) : {},
    });
  }
  return calls;
}

/** What the engine's answer says about the tool calls: which succeeded, and the memories each retain stored. */
interface CallOutcomes {
  succeeded: Set<string>;
  stored: Map<string, number>;
}

/**
 * The units of a request's retain calls, charged as one: the same upper bound a REST retain of that content reserves
 * (the engine is told to store no more, across all of them), settled to the memories the calls report they stored.
 */
function retainCharge(retains: ToolCall[], outcomes: CallOutcomes): Charge {
  const estimates = retains.map((call) => {
    const content = call.args['content'];
    return typeof content === 'string' ? piecesOf(content) : 1;
  });
  const counted = (): number =>
    retains.reduce((units, call, i) => {
      if (!outcomes.succeeded.has(call.id)) return units;
      return units + (outcomes.stored.get(call.id) ?? estimates[i]!);
    }, 0);
  return { metric: 'memories', amount: estimates.reduce((a, b) => a + b, 0), counted };
}

const SPACE_WIDE_READS = new Set(['list_memories', 'entity']);

/** Checks one tool call against the credential's scopes and bank, space and org limits. */
function checkCall(principal: Principal, bank: string | undefined, call: ToolCall, scope: Scope): void {
  requireScope(principal, scope);
  const toolBank = bank ?? call.args['bank_id'];
  if (principal.banks !== null && call.name !== 'list_banks') {
    requireBank(principal, typeof toolBank === 'string' ? toolBank : '');
  }
  if (call.name === 'recall' && call.args['include_org'] === true) {
    requireOrg(principal, typeof call.args['space'] === 'string' ? call.args['space'] : 'default');
  }
  // list_banks takes no space: its answer is filtered to the credential's banks and spaces instead.
  if (principal.spaces !== null && call.name !== 'list_banks') {
    if (call.name === 'delete_memory' || call.name === 'delete_memories') {
      throw problem('forbidden', 'mcpDeleteWithSpaces');
    }
    // Without a space these read every space of the bank (the engine's lists and entities are bank-wide by default).
    if (SPACE_WIDE_READS.has(call.name) && typeof call.args['space'] !== 'string') {
      throw problem('forbidden', 'mcpSpaceRequired', { tool: call.name });
    }
    requireSpace(principal, typeof call.args['space'] === 'string' ? call.args['space'] : 'default');
  }
}

/**
 * Reads the engine's answer once the tool calls are known: records which calls succeeded (only those are charged)
 * and filters list_banks results for limited credentials.
 */
function answerReader(principal: Principal, calls: ToolCall[], outcomes: CallOutcomes) {
  const limited = principal.banks !== null || principal.spaces !== null;
  const listings = new Set(calls.filter((c) => c.name === 'list_banks').map((c) => c.id));
  return async (res: EngineResponse): Promise<EngineResponse> => {
    const answer = await Engines.json(res);
    if (typeof answer === 'string') {
      // Not JSON (the engine answers JSON-RPC as JSON): nothing can be told apart, so every call counts, and a listing
      // that cannot be filtered is not passed on.
      if (limited && listings.size > 0) {
        throw problem('engine_error', 'unfilterable', { tool: 'list_banks' });
      }
      for (const call of calls) outcomes.succeeded.add(call.id);
      const body = Buffer.from(answer);
      const headers = { ...res.headers, 'content-length': String(body.length) };
      return { status: res.status, headers, body: Readable.from([body]) };
    }
    for (const id of succeededCalls(answer)) outcomes.succeeded.add(id);
    for (const [id, stored] of storedCounts(answer)) outcomes.stored.set(id, stored);
    if (!limited || listings.size === 0) return Engines.fromJson(res.status, res.headers, answer);
    const filtered = rewriteToolResults(answer, listings, (data) => visibleBanks(principal, data));
    return Engines.fromJson(res.status, res.headers, filtered);
  };
}

export function resourceMetadata(ctx: GatewayContext, resource: string): Json {
  return {
    resource,
    authorization_servers: [ctx.publicUrl()],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Mnemos memory',
    resource_documentation: `${ctx.publicUrl()}/openapi.json`,
  };
}

export function mcpRoutes(app: FastifyInstance, ctx: GatewayContext): void {
  app.get('/.well-known/oauth-protected-resource', { schema: { hide: true } }, async () =>
    resourceMetadata(ctx, ctx.publicUrl()),
  );
  app.get('/.well-known/oauth-protected-resource/mcp', { schema: { hide: true } }, async () =>
    resourceMetadata(ctx, `${ctx.publicUrl()}/mcp`),
  );

  // Before the body is read: an unauthenticated caller cannot make the gateway receive a body.
  const onRequest = authenticateFirst(async (request: FastifyRequest, reply: FastifyReply) => {
    try {
      request.principal = await authenticate(ctx, request, 'mcp', { session: false });
    } catch (err) {
      if (err instanceof Problem && err.status === 401) {
        const meta = `${ctx.publicUrl()}/.well-known/oauth-protected-resource/mcp`;
        // MCP clients register and ask for the scopes named here (MCP authorization, scope selection).
        const scope = MCP_CLIENT_SCOPES.join(' ');
        reply.header('www-authenticate', `Bearer realm="mnemos", resource_metadata="${meta}", scope="${scope}"`);
      }
      throw err;
    }
  });

  const handler = guarded(async (request: FastifyRequest, reply: FastifyReply) => {
    const principal = principalOf(request);
    const bank = (request.params as { bank?: string }).bank;
    if (bank !== undefined) requireBank(principal, bank);
    const calls = toolCalls(request.body).filter((call) => TOOL_SCOPES[call.name] !== undefined);
    const outcomes: CallOutcomes = { succeeded: new Set(), stored: new Map() };
    const retains = calls.filter((call) => call.name === 'retain');
    const charges: Charge[] = [];
    const extraHeaders: Record<string, string> = {};
    for (const call of calls) {
      const tool = TOOL_SCOPES[call.name];
      if (tool === undefined) continue;
      checkCall(principal, bank, call, tool.scope);
      if (call === retains[0]) {
        const charge = retainCharge(retains, outcomes);
        charges.push(charge);
        extraHeaders[MAX_NEW_MEMORIES_HEADER] = String(charge.amount);
      } else if (tool.metric !== undefined && tool.metric !== 'memories') {
        charges.push({ metric: tool.metric, amount: 1, counted: () => (outcomes.succeeded.has(call.id) ? 1 : 0) });
      }
    }
    for (const h of ['mcp-session-id', 'mcp-protocol-version', 'last-event-id']) {
      const v = request.headers[h];
      if (typeof v === 'string') extraHeaders[h] = v;
    }
    const method = request.method as 'GET' | 'POST' | 'DELETE';
    return execute(ctx, request, reply, principal, {
      charges,
      transform: calls.length > 0 ? answerReader(principal, calls, outcomes) : undefined,
      forward: {
        method,
        path: tenantPath(principal, bank === undefined ? '/mcp' : `/mcp/${seg(bank)}`),
        body: method === 'POST' ? request.body : undefined,
        accept:
          typeof request.headers.accept === 'string' ? request.headers.accept : 'application/json, text/event-stream',
        extraHeaders,
      },
    });
  });

  const schema = { hide: true };
  const bankSchema = { hide: true, params: Type.Object({ bank: Type.String({ pattern: BANK_ID_PATTERN }) }) };
  app.route({ method: ['GET', 'POST', 'DELETE'], url: '/mcp', schema, onRequest, handler });
  app.route({ method: ['GET', 'POST', 'DELETE'], url: '/mcp/:bank', schema: bankSchema, onRequest, handler });
}
