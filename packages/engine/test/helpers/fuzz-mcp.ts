// The MCP side of the fuzz suites: each tool a server lists becomes a route that calls it by JSON-RPC tools/call with
// fuzzed arguments, and its answers are read for failures a 200 hides.
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { MCP_ACCEPT, send, type FuzzAnswer, type Inspection, type RouteSpec } from './fuzz.js';

type Schema = Record<string, unknown>;

/** The JSON-RPC messages of an MCP answer, sent as JSON or as server-sent events. */
function rpcMessages(answer: FuzzAnswer): Array<Record<string, unknown>> {
  const type = String(answer.headers['content-type'] ?? '');
  const texts = type.startsWith('text/event-stream')
    ? answer.text
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5))
    : [answer.text];
  const messages: Array<Record<string, unknown>> = [];
  for (const text of texts) {
    try {
      const parsed: unknown = JSON.parse(text);
      for (const m of Array.isArray(parsed) ? (parsed as unknown[]) : [parsed]) {
        if (m !== null && typeof m === 'object') messages.push(m as Record<string, unknown>);
      }
    } catch {
      /* not JSON: nothing to read */
    }
  }
  return messages;
}

/** A tool failure that is the server's (a 5xx problem inside the result, or an unexpected error), not the caller's. */
const SERVER_TOOL_ERROR = /^Error(: the memory service failed unexpectedly| [a-z_]+ \(5\d\d\))/;

/**
 * Reads an MCP answer: a JSON-RPC internal error (-32603) or a tool result that reports a server failure is a failure
 * (503 llm_not_configured aside: the test servers have no LLM); a call whose every message is an error or a tool error
 * was refused, so it may change nothing.
 */
export function inspectMcpAnswer(answer: FuzzAnswer): Inspection {
  const messages = rpcMessages(answer);
  let refusals = 0;
  for (const m of messages) {
    const error = m['error'] as { code?: unknown; message?: unknown } | undefined;
    if (error !== undefined) {
      if (error.code === -32603) return { failure: `JSON-RPC internal error: ${String(error.message)}`, refused: true };
      refusals++;
      continue;
    }
    const result = (m['result'] ?? {}) as { isError?: unknown; content?: Array<{ text?: unknown }> };
    if (result.isError !== true) continue;
    refusals++;
    const first = result.content?.[0]?.text;
    const text = typeof first === 'string' ? first : '';
    if (SERVER_TOOL_ERROR.test(text) && !text.startsWith('Error llm_not_configured')) {
      return { failure: `tool failed on the server: ${text.slice(0, 200)}`, refused: true };
    }
  }
  return { refused: messages.length > 0 && refusals === messages.length };
}

interface McpTool {
  name: string;
  inputSchema: Schema;
}

/**
 * The tools an MCP endpoint lists (asked at `listPath` with `headers`), each as a route to `pathTemplate` that calls
 * the tool by JSON-RPC tools/call with fuzzed arguments built from its input schema.
 */
export async function mcpToolRoutes(
  base: string,
  listPath: string,
  pathTemplate: string,
  headers: Record<string, string>,
): Promise<RouteSpec[]> {
  const agent = new Agent({ keepAlive: false });
  const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
  const answer = await send(base, agent, {
    method: 'POST',
    path: listPath,
    headers: { ...MCP_ACCEPT, ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(list),
  });
  agent.destroy();
  const result = rpcMessages(answer)[0]?.['result'] as { tools?: McpTool[] } | undefined;
  const tools = result?.tools ?? [];
  assert.ok(tools.length > 0, `no tools listed at ${listPath}: ${answer.status} ${answer.text.slice(0, 200)}`);
  return tools.map((tool) => ({
    method: 'POST',
    path: pathTemplate,
    query: [],
    body: tool.inputSchema,
    headers: MCP_ACCEPT,
    wrap: (args: unknown) => ({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: tool.name, arguments: args },
    }),
    inspect: inspectMcpAnswer,
    name: `MCP ${tool.name} at ${pathTemplate}`,
  }));
}
