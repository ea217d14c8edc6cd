import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ClientRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { pointerSegment } from '@mnemos/http-input';
import { invalidField, problem } from '@mnemos/problems';
import type { Engine } from '../../engine.js';
import { engineBackend } from '../../mcp/backend.js';
import { createMcpServer } from '../../mcp/server.js';
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

function isJsonRpcMessage(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const m = value as Record<string, unknown>;
  return m['jsonrpc'] === '2.0' && (typeof m['method'] === 'string' || 'result' in m || 'error' in m);
}

/** The schema of each request method, as the SDK reads the request before it calls the method's handler. */
const REQUEST_SCHEMAS = new Map<string, (typeof ClientRequestSchema.options)[number]>(
  ClientRequestSchema.options.map((schema) => [schema.shape.method.value, schema]),
);

/**
 * Refuses a request whose params do not fit its method, naming the field: the SDK would answer it as its own internal
 * error (JSON-RPC -32603), though the mistake is the caller's. Methods the SDK does not know stay its "method not
 * found".
 */
function checkParams(messages: unknown[], batch: boolean): void {
  messages.forEach((message, index) => {
    const m = message as Record<string, unknown>;
    const schema = typeof m['method'] === 'string' && 'id' in m ? REQUEST_SCHEMAS.get(m['method']) : undefined;
    const issue = schema?.safeParse(m).error?.issues[0];
    if (issue === undefined) return;
    const path = issue.path.map((key) => `/${pointerSegment(typeof key === 'symbol' ? String(key) : key)}`).join('');
    throw invalidField(`${batch ? `/${index}` : ''}${path}` || '/', issue.message);
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
