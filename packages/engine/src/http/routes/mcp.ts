import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { invalidField, problem } from '@mnemos/problems';
import type { Engine } from '../../engine.js';
import { engineBackend } from '../../mcp/backend.js';
import { createMcpServer } from '../../mcp/server.js';
import { isJsonRpcMessage, paramsProblem } from '../../mcp/request-check.js';
import { maxNewMemories } from '../../wire/input.js';
import { BANK_ID_PATTERN, TENANT_PATTERN } from '../../wire/schemas.js';
import type { RouteExtender } from '../typed-app.js';

/**
 * The MCP server over streamable HTTP (stateless: each POST carries JSON-RPC messages and gets the answers as JSON).
 * `/mcp` and `/mcp/{bank}` serve the default tenant; `/v1/{tenant}/mcp[/{bank}]` any tenant (the gateway forwards
 * there with the engine token). Authentication and tenant checks are the engine's own (onRequest hooks).
 */
export const mcpRoutes: RouteExtender = (app, engine) => {
  const bank = Type.String({ pattern: BANK_ID_PATTERN });
  const tenant = Type.String({ pattern: TENANT_PATTERN });
  const methods: Array<'GET' | 'POST' | 'DELETE'> = ['GET', 'POST', 'DELETE'];
  const handler = (req: FastifyRequest, reply: FastifyReply) => {
    const params = req.params as { tenant?: string; bank?: string };
    return serveMcp(engine, req, reply, params.tenant ?? 'default', params.bank);
  };
  app.route({ method: methods, url: '/mcp', schema: { hide: true }, handler });
  app.route({ method: methods, url: '/mcp/:bank', schema: { hide: true, params: Type.Object({ bank }) }, handler });
  app.route({
    method: methods,
    url: '/v1/:tenant/mcp',
    schema: { hide: true, params: Type.Object({ tenant }) },
    handler,
  });
  app.route({
    method: methods,
    url: '/v1/:tenant/mcp/:bank',
    schema: { hide: true, params: Type.Object({ tenant, bank }) },
    handler,
  });
};

/** Refuses a request whose params do not fit its method, naming the field (with the message's place in a batch). */
function checkParams(messages: unknown[], batch: boolean): void {
  messages.forEach((message, index) => {
    const found = paramsProblem(message);
    if (found === undefined) return;
    throw invalidField(`${batch ? `/${index}` : ''}${found.pointer}` || '/', found.detail);
  });
}

async function serveMcp(
  engine: Engine,
  req: FastifyRequest,
  reply: FastifyReply,
  tenant: string,
  bank: string | undefined,
) {
  if (req.method !== 'POST') {
    throw problem('method_not_allowed', 'mcpPostOnly', { headers: { allow: 'POST' } });
  }
  const accept = req.headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    throw problem('not_acceptable', 'mcpAccept');
  }
  const body: unknown = req.body;
  const messages = Array.isArray(body) ? body : [body];
  if (messages.length === 0 || !messages.every(isJsonRpcMessage)) {
    throw problem('validation_failed', 'notJsonRpc');
  }
  checkParams(messages, Array.isArray(body));
  // A gateway holding quota bounds the new memories the request's retain calls store together.
  const backend = engineBackend(engine.service, tenant, { maxNewMemories: maxNewMemories(req.headers) });
  const server = createMcpServer(backend, {
    bank,
    onInternalError: (error) =>
      engine.log.error(`mcp tool failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`),
  });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  reply.hijack();
  reply.raw.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req.raw, reply.raw, body);
}
