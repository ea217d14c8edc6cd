import { ClientRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { pointerSegment } from '@mnemos/http-input';

/** A JSON-RPC 2.0 request, notification or response, as far as its envelope goes. */
export function isJsonRpcMessage(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const m = value as Record<string, unknown>;
  return m['jsonrpc'] === '2.0' && (typeof m['method'] === 'string' || 'result' in m || 'error' in m);
}

/** The schema of each request method, as the SDK reads the request before it calls the method's handler. */
const REQUEST_SCHEMAS = new Map<string, (typeof ClientRequestSchema.options)[number]>(
  ClientRequestSchema.options.map((schema) => [schema.shape.method.value, schema]),
);

/** Where a request's params fail its method's schema, and why. */
export interface ParamsProblem {
  /** JSON pointer into the message (e.g. `/params/name`); empty for the whole message. */
  pointer: string;
  detail: string;
}

/**
 * Where a request's params do not fit its method: the SDK would answer that as its own internal error (JSON-RPC
 * -32603), though the mistake is the caller's, so each face refuses it first, naming the field. Methods the SDK does not
 * know and messages that are not requests are left to the SDK.
 */
export function paramsProblem(message: unknown): ParamsProblem | undefined {
  const m = message as Record<string, unknown>;
  const schema = typeof m['method'] === 'string' && 'id' in m ? REQUEST_SCHEMAS.get(m['method']) : undefined;
  const issue = schema?.safeParse(m).error?.issues[0];
  if (issue === undefined) return undefined;
  const pointer = issue.path.map((key) => `/${pointerSegment(typeof key === 'symbol' ? String(key) : key)}`).join('');
  return { pointer, detail: issue.message };
}
