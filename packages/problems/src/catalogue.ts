/**
 * Every problem code the Mnemos servers answer, with its HTTP status and the sentences that explain it. A code keeps
 * one status everywhere; its messages are the situations it covers, each saying what went wrong and what to do.
 * Callers never write a code, a status or a sentence of their own: they name a code and one of its messages.
 */

type Template = (params: never) => string;

interface CodeEntry {
  readonly status: number;
  readonly messages: Readonly<Record<string, Template>>;
}

/** The gateway's own sentences, until its call sites move onto named messages. */
const stated = (p: { detail: string }) => p.detail;

const TOO_LARGE_ENGINE =
  'The request body is larger than this engine accepts (MNEMOS_API_MAX_BODY_BYTES); split it into smaller requests.';
const LLM_SETTINGS = 'set MNEMOS_API_LLM_PROVIDER and MNEMOS_API_LLM_MODEL (and the key) and restart';

export const CATALOGUE = {
  validation_failed: {
    status: 400,
    messages: {
      field: (p: { where: string; pointer: string; issue: string }) =>
        `The request ${p.where} is invalid: ${p.pointer} ${p.issue}.`,
      schema: (p: { where: string; pointer: string; issue: string }) =>
        `The request ${p.where} is invalid: ${p.pointer} ${p.issue}. Fix the field and send the request again.`,
      emptyBody: () => 'The request body is empty; send a JSON object.',
      maxNewMemoriesHeader: (p: { header: string }) =>
        `${p.header} must be a whole number of memories (0 to 999999999).`,
      queryWithoutWords: () => 'The query has no letters or digits; ask a question in words.',
      unknownMemoryType: (p: { type: string; allowed: readonly string[] }) =>
        `Unknown memory type ${JSON.stringify(p.type)}; use one of ${p.allowed.join(', ')}.`,
      retainWithoutContent: () => 'The request body needs `content` (one memory) or `items` (a list of {content}).',
      emptyText: () => 'text must not be empty.',
      nothingToChange: () =>
        'Nothing to change: send at least one of text, context, tags, metadata, state, occurred_at.',
      notJsonRpc: () =>
        'The body must be a JSON-RPC 2.0 message (or a batch of them): {"jsonrpc": "2.0", "method": ..., "id": ...}.',
      stated,
    },
  },
  malformed_json: {
    status: 400,
    messages: {
      unparsable: (p: { reason: string }) => `The request body is not valid JSON (${p.reason}); send a JSON object.`,
    },
  },
  json_too_deep: {
    status: 400,
    messages: {
      nested: (p: { max: number }) =>
        `The request body nests objects or arrays more than ${p.max} levels deep; flatten it and send it again.`,
    },
  },
  bad_request: {
    status: 400,
    messages: {
      badPercentEncoding: () =>
        'The request URL has a malformed percent-encoding (% must be followed by two hex digits); fix it.',
      invalidUrl: (p: { reason: string }) => `The request URL is invalid: ${p.reason}`,
      /** A client error the HTTP framework reports in its own words. */
      framework: (p: { reason: string }) => p.reason,
      notHttp: () => 'The request is not valid HTTP/1.1; check what the client sends.',
    },
  },
  unauthorized: {
    status: 401,
    messages: {
      missingToken: () => 'This engine requires a token: send Authorization: Bearer <MNEMOS_API_AUTH_TOKEN>.',
      wrongToken: () => 'The token is not valid for this engine; send the value of its MNEMOS_API_AUTH_TOKEN.',
      stated,
    },
  },
  forbidden: { status: 403, messages: { stated } },
  insufficient_scope: {
    status: 403,
    messages: {
      missingScope: (p: { scope: string }) =>
        `This operation needs the scope "${p.scope}", which the credential does not have.`,
      stated,
    },
  },
  not_found: {
    status: 404,
    messages: {
      noRoute: (p: { route: string }) => `No route ${p.route}; see /docs for the API.`,
      stated,
    },
  },
  tenant_not_found: {
    status: 404,
    messages: {
      singleTenant: (p: { tenant: string }) =>
        `This engine serves only the tenant "default" (got "${p.tenant}"); use /v1/default/..., or set ` +
        'MNEMOS_API_AUTH_TOKEN to serve several tenants.',
    },
  },
  bank_not_found: {
    status: 404,
    messages: {
      notYetWritten: (p: { bankId: string }) => `Bank "${p.bankId}" does not exist; retain into it or PUT it first.`,
      notCreated: (p: { bankId: string }) => `Bank "${p.bankId}" does not exist; create it with PUT first.`,
    },
  },
  memory_not_found: {
    status: 404,
    messages: {
      inThisBank: (p: { id: string }) => `Memory ${p.id} does not exist in this bank (it may have been deleted).`,
      inNamedBank: (p: { id: string; bankId: string }) =>
        `Memory ${p.id} does not exist in bank "${p.bankId}" (it may have been deleted).`,
      stated,
    },
  },
  operation_not_found: {
    status: 404,
    messages: {
      unknown: (p: { id: string }) => `Operation ${p.id} does not exist.`,
      stated,
    },
  },
  method_not_allowed: {
    status: 405,
    messages: {
      route: (p: { method: string; path: string; allow: readonly string[] }) =>
        `${p.path} does not answer ${p.method}; use ${p.allow.join(', ')}.`,
      mcpPostOnly: () =>
        'This MCP endpoint is stateless streamable HTTP: send JSON-RPC messages with POST (no GET event stream, ' +
        'no sessions to DELETE).',
    },
  },
  not_acceptable: {
    status: 406,
    messages: {
      mcpAccept: () => 'MCP clients must send Accept: application/json, text/event-stream (streamable HTTP transport).',
    },
  },
  request_timeout: { status: 408, messages: { stated } },
  duplicate_memory: {
    status: 409,
    messages: { sameText: () => 'Another memory in this bank and space already has exactly this text.' },
  },
  account_exists: { status: 409, messages: { stated } },
  payload_too_large: {
    status: 413,
    messages: { engineBody: () => TOO_LARGE_ENGINE, stated },
  },
  too_many_memories: {
    status: 413,
    messages: {
      overBound: (p: { wouldStore: number; allowed: number }) =>
        `This retain would store ${p.wouldStore} new memories after chunking, more than the ${p.allowed} allowed; ` +
        'send less content or raise the quota.',
    },
  },
  unsupported_media_type: {
    status: 415,
    messages: {
      json: () => 'Send the body as JSON with Content-Type: application/json.',
      stated,
    },
  },
  rate_limited: { status: 429, messages: { stated } },
  quota_exceeded: { status: 429, messages: { stated } },
  headers_too_large: {
    status: 431,
    messages: {
      tooLarge: () => 'The request headers are larger than the server accepts; send fewer or shorter headers.',
    },
  },
  internal_error: {
    status: 500,
    messages: {
      engine: () => 'The engine failed to handle this request; it has been logged. Try again.',
      stated,
    },
  },
  llm_bad_answer: {
    status: 502,
    messages: { unusable: (p: { reason: string }) => `The LLM's answer could not be used: ${p.reason}` },
  },
  llm_rejected: {
    status: 502,
    messages: {
      rejected: (p: { reason: string }) =>
        `The LLM provider rejected the call: ${p.reason} Check MNEMOS_API_LLM_* settings.`,
    },
  },
  engine_error: { status: 502, messages: { stated } },
  llm_not_configured: {
    status: 503,
    messages: {
      noLlm: () =>
        `Reflect needs an LLM and this engine has none; ${LLM_SETTINGS}. Retain and recall work without one.`,
    },
  },
  llm_unavailable: {
    status: 503,
    messages: { unavailable: (p: { reason: string }) => `The LLM is unavailable: ${p.reason} Try again shortly.` },
  },
  server_busy: {
    status: 503,
    messages: {
      connectionFull: () =>
        'This connection already has as many request bodies in flight as the server accepts; ' +
        'wait for their answers, then retry.',
      serverFull: () =>
        'The server is receiving as many request bodies as it accepts at once; retry after the delay given.',
    },
  },
  warming: {
    status: 503,
    messages: {
      starting: (p: { stage: string }) => `The engine is starting (${p.stage}); retry in a few seconds.`,
    },
  },
  stopping: {
    status: 503,
    messages: { shuttingDown: () => 'The engine is shutting down; retry once it is back.' },
  },
  starting: { status: 503, messages: { stated } },
  database_unavailable: { status: 503, messages: { stated } },
  engine_unavailable: { status: 503, messages: { stated } },
  engine_timeout: { status: 504, messages: { stated } },
  llm_timeout: {
    status: 504,
    messages: {
      tooSlow: (p: { reason: string }) =>
        `The LLM did not answer in time: ${p.reason} Try again, or raise MNEMOS_API_LLM_TIMEOUT_MS.`,
    },
  },
  // The console's accounts and sessions (gateway).
  weak_password: { status: 400, messages: { stated } },
  project_required: { status: 400, messages: { stated } },
  invalid_credentials: { status: 401, messages: { stated } },
  csrf_failed: { status: 403, messages: { stated } },
  signup_closed: { status: 403, messages: { stated } },
  interaction_not_found: { status: 404, messages: { stated } },
  signin_throttled: { status: 429, messages: { stated } },
  console_not_built: { status: 503, messages: { stated } },
} as const satisfies Record<string, CodeEntry>;

type Catalogue = typeof CATALOGUE;
export type ProblemCode = keyof Catalogue;
export type MessageName<C extends ProblemCode> = keyof Catalogue[C]['messages'] & string;
export type MessageParams<C extends ProblemCode, M extends MessageName<C>> = Parameters<
  Catalogue[C]['messages'][M] extends (...args: infer A) => string ? (...args: A) => string : never
>;

/** The status a code always answers with. */
export function statusOf(code: ProblemCode): number {
  return CATALOGUE[code].status;
}

function templateOf(code: ProblemCode, message: string): (...args: unknown[]) => string {
  // The generic signatures check the parameters against the named message; the lookup itself is by name.
  const messages = CATALOGUE[code].messages as unknown as Readonly<Record<string, (...args: unknown[]) => string>>;
  const template = messages[message];
  if (template === undefined) throw new Error(`problem code ${code} has no message ${message}`);
  return template;
}

/** How many parameters a message takes (none, or one object of named values). */
export function paramCountOf(code: ProblemCode, message: string): number {
  return templateOf(code, message).length;
}

/** The sentence of one message of a code, filled in with its parameters. */
export function messageOf<C extends ProblemCode, M extends MessageName<C>>(
  code: C,
  message: M,
  ...params: MessageParams<C, M>
): string {
  return templateOf(code, message)(...params);
}
