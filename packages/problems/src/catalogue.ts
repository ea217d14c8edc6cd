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

/**
 * A sentence its caller writes, for the few situations whose text is not the catalogue's to know: the input layer's
 * body limits (each server names its own setting) and a database driver's reason for being out of reach.
 */
const stated = (p: { detail: string }) => p.detail;

const TOO_LARGE_ENGINE =
  'The request body is larger than this engine accepts (MNEMOS_API_MAX_BODY_BYTES); split it into smaller requests.';
const LLM_SETTINGS = 'set MNEMOS_API_LLM_PROVIDER and MNEMOS_API_LLM_MODEL (and the key) and restart';
/** What a new account password must be, said the same way whichever part of it a password breaks. */
const passwordRule = (min: number): string =>
  `choose one of at least ${min} characters that is not only blanks, not a commonly used password and not the ` +
  'email address.';
const CHECK_BEFORE_RETRY =
  'a retain may still be stored, so it was counted (check before retrying it); a recall or reflect was not counted.';

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
      retainWithoutContent: () =>
        'The request body needs `content` (one memory), `items` (a list of {content}) or `messages` (a list of {role, content}).',
      emptyText: () => 'text must not be empty.',
      editTextTooLong: (p: { maxChars: number; maxTokens: number }) =>
        `text is longer than one memory holds (${p.maxChars} characters, ${p.maxTokens} tokens); ` +
        'retain long text instead, which cuts it into memories of that size.',
      nothingToChange: () =>
        'Nothing to change: send at least one of text, context, tags, metadata, state, occurred_at, valid_from, valid_to.',
      notJsonRpc: () =>
        'The body must be a JSON-RPC 2.0 message (or a batch of them): {"jsonrpc": "2.0", "method": ..., "id": ...}.',
      expiryInPast: () => 'expires_at must be in the future; send a later time or omit it.',
      noDefaultScopes: (p: { defaults: readonly string[] }) =>
        `This credential holds none of the default scopes (${p.defaults.join(', ')}); ` +
        'name the scopes to grant in "scopes".',
      unknownAccount: (p: { accountId: string }) =>
        `No account "${p.accountId}"; create it with POST /admin/accounts or use the id of an existing one.`,
      unknownPlan: (p: { plan: string; plans: readonly string[] }) =>
        `Unknown plan "${p.plan}"; plans are ${p.plans.join(', ')}.`,
      unknownEngine: (p: { engine: string; engines: readonly string[] }) =>
        `Unknown engine "${p.engine}"; engines are ${p.engines.join(', ')}.`,
      consentWithoutProject: () => 'Name the project the client may act on in "project_id".',
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
      noCredential: () => 'Send an API key or OAuth access token as "Authorization: Bearer <credential>".',
      notBearer: () => 'The Authorization header must be "Bearer <credential>".',
      malformedKey: () => 'The API key is malformed: keys are "mnm_live_" followed by 43 letters and digits.',
      unknownKey: () => 'The API key is not valid; check that it was copied in full, or create a new one.',
      revokedKey: () => 'The API key was revoked; create a new one.',
      expiredKey: () => 'The API key has expired; create a new one.',
      malformedToken: () => 'The access token is malformed; send the access_token the token endpoint issued.',
      unknownToken: () => 'The access token is not valid, expired or was revoked; obtain a new one.',
      expiredToken: () => 'The access token has expired; obtain a new one (refresh it or authorize again).',
      clientExpired: () => 'The OAuth client this token was issued to has expired; create a new client.',
      unauthenticated: () => 'Not authenticated; send a credential as "Authorization: Bearer <credential>".',
      notSignedIn: () => 'Not signed in; sign in with POST /v1/account/session.',
      sessionEnded: () => 'Not signed in, or the session has ended; sign in with POST /v1/account/session.',
      adminToken: () => 'The admin API needs "Authorization: Bearer <GATEWAY_ADMIN_TOKEN>".',
    },
  },
  forbidden: {
    status: 403,
    messages: {
      outsideBanks: (p: { bank: string }) =>
        `This credential is limited to certain banks and may not use bank "${p.bank}".`,
      outsideSpaces: (p: { space: string }) =>
        `This credential is limited to certain spaces and may not use space "${p.space}".`,
      orgBankOutsideBanks: (p: { space: string; orgBank: string }) =>
        `This credential is limited to certain banks and may not use the org memory of space "${p.space}"; ` +
        `that needs "${p.orgBank}" among its banks.`,
      bankWideWithSpaces: () =>
        'This credential is limited to certain spaces; bank-wide operations (profile edits, bank deletion) need a ' +
        'credential without space limits.',
      mcpDeleteWithSpaces: () => 'Space-limited credentials cannot delete through MCP; use the REST path.',
      mcpSpaceRequired: (p: { tool: string }) =>
        `This credential is limited to certain spaces, and ${p.tool} without a space reads every space; ` +
        'pass the space argument.',
      grantWider: (p: { kind: string; wider: string }) =>
        `This credential is limited to certain ${p.kind} and cannot grant ${p.wider}; ` +
        `ask only for its own ${p.kind}, or omit ${p.kind} to inherit them.`,
      expiryBeyondHeld: (p: { heldUntil: string }) =>
        `This credential expires at ${p.heldUntil} and cannot grant access beyond that; ` +
        'ask for an earlier expires_at or omit it to inherit.',
      beyondReach: (p: { what: string; id: string }) =>
        `The ${p.what} "${p.id}" grants more than this credential holds (scopes, banks, spaces or a later expiry); ` +
        'manage it with a credential that holds at least as much.',
      clientOfOtherProject: (p: { project: string }) =>
        `This client belongs to project "${p.project}" and can be authorized for that project only.`,
    },
  },
  insufficient_scope: {
    status: 403,
    messages: {
      missingScope: (p: { scope: string }) =>
        `This operation needs the scope "${p.scope}", which the credential does not have.`,
      grantUnheld: (p: { missing: readonly string[] }) =>
        `A credential can only grant scopes it holds itself; it lacks ${p.missing.join(', ')}.`,
    },
  },
  not_found: {
    status: 404,
    messages: {
      noRoute: (p: { route: string }) => `No route ${p.route}; see /docs for the API.`,
      noGatewayRoute: (p: { route: string }) => `No route ${p.route}; see /openapi.json for the paths.`,
      noProject: (p: { id: string }) => `No project "${p.id}"; list the projects to find its id.`,
      noAccountProject: (p: { id: string }) =>
        `No project "${p.id}" among the projects of the signed-in account; list them with GET /v1/account/projects.`,
      noKey: (p: { id: string }) => `No API key "${p.id}" in this project; list them with GET /v1/me/keys.`,
      noClient: (p: { id: string }) =>
        `No OAuth client "${p.id}" in this project; list them with GET /v1/me/oauth/clients.`,
      noConsoleFile: (p: { path: string }) => `No console file ${p.path}; the console starts at /console/.`,
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
      notVisible: (p: { id: string; bankId: string }) =>
        `No memory "${p.id}" in bank "${p.bankId}" is visible to this credential.`,
    },
  },
  entity_not_found: {
    status: 404,
    messages: {
      inThisBank: (p: { name: string }) =>
        `No memory of this bank names the entity ${JSON.stringify(p.name)}; list the bank's entities with GET .../entities.`,
    },
  },
  operation_not_found: {
    status: 404,
    messages: {
      unknown: (p: { id: string }) => `Operation ${p.id} does not exist.`,
      notVisible: (p: { id: string }) => `No operation "${p.id}" is visible to this credential.`,
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
  account_exists: {
    status: 409,
    messages: {
      signUp: () => 'An account with this email already exists; sign in instead.',
      adminCreate: () => 'An account with this email already exists; use its id, or choose another email.',
    },
  },
  payload_too_large: {
    status: 413,
    messages: {
      engineBody: () => TOO_LARGE_ENGINE,
      gatewayBody: () =>
        'The request body is larger than the gateway accepts (GATEWAY_MAX_BODY_BYTES); ' +
        'send fewer or smaller items per call.',
      stated,
    },
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
    },
  },
  rate_limited: {
    status: 429,
    messages: {
      credential: (p: { perMinute: number; wait: number }) =>
        `This credential is limited to ${p.perMinute} requests per minute; retry in ${p.wait} s.`,
      adminTokenGuessing: (p: { wait: number }) =>
        `Too many requests with a wrong admin token from this address; retry in ${p.wait} s ` +
        'with the right GATEWAY_ADMIN_TOKEN.',
      signUpsFromAddress: (p: { limit: number; window: string; wait: number }) =>
        `Too many sign-ups from this address (${p.limit} per ${p.window}); retry in ${p.wait} s.`,
      signUpsTotal: (p: { limit: number; window: string; wait: number }) =>
        `This server takes at most ${p.limit} sign-ups per ${p.window} from everyone together and has reached ` +
        `that; retry in ${p.wait} s.`,
      clientRegistrationsFromAddress: (p: { limit: number; window: string; wait: number }) =>
        `Too many OAuth client registrations from this address (${p.limit} per ${p.window}); reuse a client ` +
        `already registered or retry in ${p.wait} s.`,
      clientRegistrationsTotal: (p: { limit: number; window: string; wait: number }) =>
        `This server takes at most ${p.limit} OAuth client registrations per ${p.window} from everyone together ` +
        `and has reached that; retry in ${p.wait} s.`,
    },
  },
  quota_exceeded: {
    status: 429,
    messages: {
      used: (p: { used: number; limit: number; metric: string; period: string; needed: number; resetsAt: string }) =>
        `The project has used ${p.used} of its ${p.limit} ${p.metric} for ${p.period}` +
        `${p.needed > 1 ? ` and this request needs ${p.needed}` : ''}; the quota resets at ${p.resetsAt}. ` +
        'Upgrade the plan for more.',
    },
  },
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
      gateway: () => 'The gateway failed unexpectedly; the request was not completed. Try again.',
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
  engine_error: {
    status: 502,
    messages: {
      failed: () => 'The memory engine failed to complete the request; nothing was counted. Try again.',
      unfilterable: (p: { tool: string }) =>
        `The memory engine answered ${p.tool} in a form the gateway cannot filter; try again.`,
    },
  },
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
  starting: {
    status: 503,
    messages: { gateway: () => 'The gateway is starting; retry in a few seconds.' },
  },
  database_unavailable: {
    status: 503,
    messages: {
      controlPlane: () => 'The control-plane database is unreachable; retry after the delay given.',
      quotaLedger: () => 'The quota ledger is unreachable right now; nothing was counted. Retry after the delay given.',
      stated,
    },
  },
  engine_unavailable: {
    status: 503,
    messages: {
      notConfigured: (p: { engine: string }) =>
        `The project's engine "${p.engine}" is not configured on this gateway; ` +
        'name it in GATEWAY_ENGINE_URL and GATEWAY_ENGINE_TOKEN, or move the project to a configured engine.',
      unreachable: () =>
        'The memory engine is unreachable right now; nothing was counted. Retry after the delay given.',
      connectionBroke: () => `The connection to the memory engine broke during the request; ${CHECK_BEFORE_RETRY}`,
    },
  },
  engine_timeout: {
    status: 504,
    messages: { tooSlow: () => `The memory engine did not answer in time; ${CHECK_BEFORE_RETRY}` },
  },
  llm_timeout: {
    status: 504,
    messages: {
      tooSlow: (p: { reason: string }) =>
        `The LLM did not answer in time: ${p.reason} Try again, or raise MNEMOS_API_LLM_TIMEOUT_MS.`,
    },
  },
  // The console's accounts and sessions (gateway).
  weak_password: {
    status: 400,
    messages: {
      tooShort: (p: { min: number }) => `The password is too short; ${passwordRule(p.min)}`,
      onlyBlanks: (p: { min: number }) => `The password is only blank characters; ${passwordRule(p.min)}`,
      common: (p: { min: number }) =>
        `The password is a commonly used password, among the first an attacker tries; ${passwordRule(p.min)}`,
      isEmail: (p: { min: number }) => `The password is the email address; ${passwordRule(p.min)}`,
    },
  },
  project_required: {
    status: 400,
    messages: {
      header: () =>
        'A call signed in by the console session cookie must name its project in the header X-Mnemos-Project ' +
        '(an id from GET /v1/account/projects).',
    },
  },
  invalid_credentials: { status: 401, messages: { wrongPassword: () => 'Wrong email or password.' } },
  csrf_failed: {
    status: 403,
    messages: {
      missingToken: () =>
        'A call signed in by the console session cookie that changes something must carry the header X-CSRF-Token ' +
        'with the csrf_token from GET /v1/account/session.',
    },
  },
  signup_closed: {
    status: 403,
    messages: {
      closed: () => 'Sign-up is closed on this gateway (GATEWAY_SIGNUP=closed); ask its operator for an account.',
    },
  },
  interaction_not_found: {
    status: 404,
    messages: { ended: () => 'This authorization request has ended or expired; start again from the application.' },
  },
  signin_throttled: {
    status: 429,
    messages: {
      paused: (p: { minutes: number; at: string }) =>
        'Too many failed sign-ins: sign-in is paused for this account or network after several wrong passwords. ' +
        `Try again in ${p.minutes} minute${p.minutes === 1 ? '' : 's'} (at ${p.at} UTC).`,
    },
  },
  console_not_built: {
    status: 503,
    messages: {
      missing: (p: { indexFile: string }) =>
        `The console app is not built (no ${p.indexFile}); run \`npm run build\` and restart the gateway.`,
    },
  },
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
