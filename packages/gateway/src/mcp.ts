// MCP through the gateway: /mcp and /mcp/{bank} forward (streamable HTTP, answers streamed back) to the engine's
// /v1/{tenant}/mcp after checking the `mcp` scope plus each called tool's own scope, bank and space limits, and quota.
// Discovery: a 401 names the protected-resource metadata (RFC 9728), which points MCP clients at the authorization
// server, where they can register dynamically.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requireBank, requireScope, requireSpace, type Principal } from './auth.js';
import type { GatewayContext } from './context.js';
import { authenticate, execute, guarded, seg, tenantPath } from './proxy.js';
import { HttpProblem } from './problem.js';
import { MCP_CLIENT_SCOPES } from './oauth/client-scopes.js';
import { SCOPES, type Metric, type Scope } from './scopes.js';
import { BANK_ID_PATTERN } from './schemas.js';

const TOOL_SCOPES: Record<string, { scope: Scope; metric?: Metric }> = {
  retain: { scope: 'memory:retain', metric: 'memories' },
  recall: { scope: 'memory:recall', metric: 'recalls' },
  reflect: { scope: 'memory:reflect', metric: 'reflects' },
  list_memories: { scope: 'memory:recall' },
  list_banks: { scope: 'memory:recall' },
  delete_memory: { scope: 'memory:delete' },
};

type Json = Record<string, unknown>;

function toolCalls(body: unknown): Array<{ name: string; args: Json }> {
  const messages = Array.isArray(body) ? body : [body];
  const calls: Array<{ name: string; args: Json }> = [];
  for (const m of messages) {
    if (m === null || typeof m !== 'object' || (m as Json)['method'] !== 'tools/call') continue;
    const params = (m as Json)['params'];
    const name = params !== null && typeof params === 'object' ? (params as Json)['name'] : undefined;
    const args = params !== null && typeof params === 'object' ? (params as Json)['arguments'] : undefined;
    calls.push({ name: typeof name === 'string' ? name : '', args: args !== null && typeof args === 'object' ? args as Json : {} });
  }
  return calls;
}

function retainAmount(args: Json): number {
  const items = args['items'];
  return Array.isArray(items) && items.length > 0 ? items.length : 1;
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
  app.get('/.well-known/oauth-protected-resource', { schema: { hide: true } }, async () => resourceMetadata(ctx, ctx.publicUrl()));
  app.get('/.well-known/oauth-protected-resource/mcp', { schema: { hide: true } }, async () => resourceMetadata(ctx, `${ctx.publicUrl()}/mcp`));

  const handler = guarded(async (request: FastifyRequest, reply: FastifyReply) => {
    let principal: Principal;
    try {
      principal = await authenticate(ctx, request, 'mcp');
    } catch (err) {
      if (err instanceof HttpProblem && err.status === 401) {
        const meta = `${ctx.publicUrl()}/.well-known/oauth-protected-resource/mcp`;
        // MCP clients register and ask for the scopes named here (MCP authorization, scope selection).
        const scope = MCP_CLIENT_SCOPES.join(' ');
        reply.header('www-authenticate', `Bearer realm="mnemos", resource_metadata="${meta}", scope="${scope}"`);
      }
      throw err;
    }
    const bank = (request.params as { bank?: string }).bank;
    if (bank !== undefined) requireBank(principal, bank);
    const charges: Array<{ metric: Metric; amount: number }> = [];
    for (const call of toolCalls(request.body)) {
      const tool = TOOL_SCOPES[call.name];
      if (tool === undefined) continue;
      requireScope(principal, tool.scope);
      const toolBank = bank ?? call.args['bank_id'];
      if (principal.banks !== null && call.name !== 'list_banks') requireBank(principal, typeof toolBank === 'string' ? toolBank : '');
      if (principal.spaces !== null) {
        if (call.name === 'delete_memory') throw new HttpProblem(403, 'forbidden', 'Space-limited credentials cannot delete through MCP; use the REST path.');
        requireSpace(principal, typeof call.args['space'] === 'string' ? call.args['space'] : 'default');
      }
      if (tool.metric !== undefined) charges.push({ metric: tool.metric, amount: tool.metric === 'memories' ? retainAmount(call.args) : 1 });
    }
    const extraHeaders: Record<string, string> = {};
    for (const h of ['mcp-session-id', 'mcp-protocol-version', 'last-event-id']) {
      const v = request.headers[h];
      if (typeof v === 'string') extraHeaders[h] = v;
    }
    const method = request.method as 'GET' | 'POST' | 'DELETE';
    return execute(ctx, request, reply, principal, {
      charges,
      forward: {
        method,
        path: tenantPath(principal, bank === undefined ? '/mcp' : `/mcp/${seg(bank)}`),
        body: method === 'POST' ? request.body : undefined,
        accept: typeof request.headers.accept === 'string' ? request.headers.accept : 'application/json, text/event-stream',
        extraHeaders,
      },
    });
  });

  const schema = { hide: true };
  const bankSchema = { hide: true, params: Type.Object({ bank: Type.String({ pattern: BANK_ID_PATTERN }) }) };
  app.route({ method: ['GET', 'POST', 'DELETE'], url: '/mcp', schema, handler });
  app.route({ method: ['GET', 'POST', 'DELETE'], url: '/mcp/:bank', schema: bankSchema, handler });
}
