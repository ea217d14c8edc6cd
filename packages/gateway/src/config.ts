// Gateway configuration from the environment (GATEWAY_*), validated once at start with one clear line per problem.
import { closest, distance } from 'fastest-levenshtein';
import { z } from 'zod';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from '@mnemos/http-input';
import type { CreationLimits } from './creation-limits.js';

const url = z.url();

const schema = z.object({
  GATEWAY_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  GATEWAY_HOST: z.string().min(1).default('0.0.0.0'),
  GATEWAY_PUBLIC_URL: url.optional(),
  GATEWAY_CONSOLE_URL: url.optional(),
  GATEWAY_DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL'),
  GATEWAY_ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters'),
  GATEWAY_ENGINE_URL: z.string().min(1),
  GATEWAY_ENGINE_TOKEN: z.string().min(1),
  GATEWAY_CORS_ORIGINS: z.string().default(''),
  GATEWAY_TRUST_PROXY: z.enum(['true', 'false']).default('false'),
  GATEWAY_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  GATEWAY_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(20_000),
  GATEWAY_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  GATEWAY_MAX_CONNECTION_BODY_BYTES: z.coerce.number().int().min(1024).optional(),
  GATEWAY_MAX_INFLIGHT_BODY_BYTES: z.coerce.number().int().min(1024).optional(),
  GATEWAY_ENGINE_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  GATEWAY_ENGINE_CONNECT_TIMEOUT_MS: z.coerce.number().int().positive().default(2_000),
  GATEWAY_DB_POOL_SIZE: z.coerce.number().int().positive().default(20),
  GATEWAY_QUOTA_LEASE_UNITS: z.coerce.number().int().positive().max(1_000_000).default(100),
  GATEWAY_QUOTA_FLUSH_MS: z.coerce.number().int().min(50).max(60_000).default(1_000),
  GATEWAY_SIGNIN_MAX_FAILURES_PER_ACCOUNT: z.coerce.number().int().positive().max(10_000).default(5),
  GATEWAY_SIGNIN_MAX_FAILURES_PER_ADDRESS: z.coerce.number().int().positive().max(100_000).default(20),
  GATEWAY_SIGNIN_WINDOW_SECONDS: z.coerce.number().int().positive().max(86_400).default(900),
  GATEWAY_SIGNUP: z.enum(['open', 'closed']).default('open'),
  GATEWAY_SIGNUP_MAX_PER_ADDRESS: z.coerce.number().int().positive().max(1_000_000).default(10),
  GATEWAY_SIGNUP_MAX_TOTAL: z.coerce.number().int().positive().max(1_000_000).default(200),
  GATEWAY_SIGNUP_WINDOW_SECONDS: z.coerce.number().int().positive().max(86_400).default(3_600),
  GATEWAY_OAUTH_REGISTRATION_MAX_PER_ADDRESS: z.coerce.number().int().positive().max(1_000_000).default(30),
  GATEWAY_OAUTH_REGISTRATION_MAX_TOTAL: z.coerce.number().int().positive().max(1_000_000).default(1_000),
  GATEWAY_OAUTH_REGISTRATION_WINDOW_SECONDS: z.coerce.number().int().positive().max(86_400).default(3_600),
  GATEWAY_SESSION_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(90 * 86_400)
    .default(7 * 86_400),
  GATEWAY_CONSOLE_DIR: z.string().min(1).optional(),
  GATEWAY_LOG_LEVEL: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  GATEWAY_LOG_FORMAT: z
    .enum(LOG_FORMATS, { error: 'must be pretty or json (unset: pretty on a terminal, json otherwise)' })
    .optional(),
});

export interface GatewayConfig {
  port: number;
  host: string;
  /** Base address advertised (issuer, links); undefined until known when the port is chosen at start. */
  publicUrl: string | undefined;
  consoleUrl: string | undefined;
  databaseUrl: string;
  adminToken: string;
  /** Engines by name; a single unnamed GATEWAY_ENGINE_URL is the engine `default`. */
  engines: Map<string, { url: string; token: string }>;
  corsOrigins: string[];
  trustProxy: boolean;
  maxBodyBytes: number;
  /** Time limits and in-flight body budgets of the HTTP server (`@mnemos/http-input`, body-budget.ts). */
  http: HttpLimits;
  engineTimeoutMs: number;
  engineConnectTimeoutMs: number;
  dbPoolSize: number;
  /** Largest block of quota units one gateway leases at a time (quota.ts). */
  quotaLeaseUnits: number;
  /** How often each gateway writes its counted units and heartbeat. */
  quotaFlushMs: number;
  /** Failed sign-ins on the authorization pages allowed per account and per address within one window. */
  signIn: { perAccount: number; perAddress: number; windowMs: number };
  /** Whether anyone may create an account through the console (`closed`: only the admin API creates accounts). */
  signup: 'open' | 'closed';
  /** Console sign-ups allowed per client address and from everyone together within one window. */
  signUps: CreationLimits;
  /** OAuth dynamic client registrations allowed per client address and from everyone together within one window. */
  clientRegistrations: CreationLimits;
  /** How long a console session lasts after sign-in. */
  sessionTtlMs: number;
  /** The built console app (index.html and its assets); undefined: the console package's own build folder. */
  consoleDir: string | undefined;
  logLevel: LogLevel;
  /** Undefined: pretty lines on a terminal, JSON lines otherwise. */
  logFormat: LogFormat | undefined;
}

export interface HttpLimits {
  /** The request line and headers must arrive within this time. */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this time. */
  requestTimeoutMs: number;
  /** Body bytes one connection may have in flight. */
  perConnectionBodyBytes: number;
  /** Body bytes all connections together may have in flight; over it new bodies get 503 with Retry-After. */
  globalBodyBytes: number;
}

export class ConfigError extends Error {}

/**
 * One warning per GATEWAY_* variable the gateway does not read (a mistyped setting is otherwise silently ignored),
 * naming the closest valid name when it is a plausible typo (within a quarter of the name's length in edits).
 */
export function unknownGatewayVariables(env: Record<string, string | undefined>): string[] {
  const known = Object.keys(schema.shape);
  return Object.keys(env)
    .filter((name) => name.startsWith('GATEWAY_') && !known.includes(name))
    .sort()
    .map((name) => {
      const guess = closest(name, known);
      const hint = distance(name, guess) <= Math.max(2, Math.floor(name.length / 4)) ? `; did you mean ${guess}?` : '';
      return `${name} is not a gateway setting and is ignored${hint}`;
    });
}

/**
 * Every missing or invalid setting in one line, so a first deployment is fixed in one round instead of one restart per
 * setting: missing ones together first, then each invalid one with what it must be.
 */
function settingProblems(issues: readonly z.core.$ZodIssue[], env: Record<string, string | undefined>): string {
  const missing: string[] = [];
  const invalid: string[] = [];
  for (const issue of issues) {
    const name = issue.path.join('.');
    if (env[name] === undefined) missing.push(name);
    else invalid.push(`${name}: ${issue.message}`);
  }
  const parts = [];
  if (missing.length > 0) parts.push(`${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} required`);
  parts.push(...invalid);
  return `${parts.join('; ')}.`;
}

const stripSlash = (s: string): string => s.replace(/\/+$/, '');

export function loadConfig(env: Record<string, string | undefined>): GatewayConfig {
  const parsed = schema.safeParse(env);
  if (!parsed.success) throw new ConfigError(settingProblems(parsed.error.issues, env));
  const e = parsed.data;
  const corsOrigins = e.GATEWAY_CORS_ORIGINS.split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map(stripSlash);
  for (const origin of corsOrigins) {
    if (!/^https?:\/\/[^/\s]+$/.test(origin)) {
      throw new ConfigError(`GATEWAY_CORS_ORIGINS: "${origin}" is not an origin (scheme://host[:port])`);
    }
  }
  return {
    port: e.GATEWAY_PORT,
    host: e.GATEWAY_HOST,
    publicUrl: e.GATEWAY_PUBLIC_URL === undefined ? undefined : stripSlash(e.GATEWAY_PUBLIC_URL),
    consoleUrl: e.GATEWAY_CONSOLE_URL === undefined ? undefined : stripSlash(e.GATEWAY_CONSOLE_URL),
    databaseUrl: e.GATEWAY_DATABASE_URL,
    adminToken: e.GATEWAY_ADMIN_TOKEN,
    engines: parseEngines(e.GATEWAY_ENGINE_URL, e.GATEWAY_ENGINE_TOKEN),
    corsOrigins,
    trustProxy: e.GATEWAY_TRUST_PROXY === 'true',
    maxBodyBytes: e.GATEWAY_MAX_BODY_BYTES,
    http: httpLimits(e),
    engineTimeoutMs: e.GATEWAY_ENGINE_TIMEOUT_MS,
    engineConnectTimeoutMs: e.GATEWAY_ENGINE_CONNECT_TIMEOUT_MS,
    dbPoolSize: e.GATEWAY_DB_POOL_SIZE,
    quotaLeaseUnits: e.GATEWAY_QUOTA_LEASE_UNITS,
    quotaFlushMs: e.GATEWAY_QUOTA_FLUSH_MS,
    signIn: {
      perAccount: e.GATEWAY_SIGNIN_MAX_FAILURES_PER_ACCOUNT,
      perAddress: e.GATEWAY_SIGNIN_MAX_FAILURES_PER_ADDRESS,
      windowMs: e.GATEWAY_SIGNIN_WINDOW_SECONDS * 1000,
    },
    signup: e.GATEWAY_SIGNUP,
    signUps: creationLimits(e, 'GATEWAY_SIGNUP'),
    clientRegistrations: creationLimits(e, 'GATEWAY_OAUTH_REGISTRATION'),
    sessionTtlMs: e.GATEWAY_SESSION_TTL_SECONDS * 1000,
    consoleDir: e.GATEWAY_CONSOLE_DIR,
    logLevel: e.GATEWAY_LOG_LEVEL,
    logFormat: e.GATEWAY_LOG_FORMAT,
  };
}

/** The allowances of one kind of creation; one address alone may not be allowed more than everyone together. */
function creationLimits(
  e: z.infer<typeof schema>,
  prefix: 'GATEWAY_SIGNUP' | 'GATEWAY_OAUTH_REGISTRATION',
): CreationLimits {
  const perAddress = e[`${prefix}_MAX_PER_ADDRESS`];
  const total = e[`${prefix}_MAX_TOTAL`];
  if (perAddress > total) {
    throw new ConfigError(
      `${prefix}_MAX_PER_ADDRESS (${perAddress}) must not exceed ${prefix}_MAX_TOTAL (${total}); ` +
        'lower the first or raise the second.',
    );
  }
  return { perAddress, total, windowMs: e[`${prefix}_WINDOW_SECONDS`] * 1000 };
}

/** Budgets default to room for a few bodies per connection and many at once, never less than one whole body. */
function httpLimits(e: z.infer<typeof schema>): HttpLimits {
  const maxBody = e.GATEWAY_MAX_BODY_BYTES;
  const limits = {
    headersTimeoutMs: e.GATEWAY_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: e.GATEWAY_REQUEST_TIMEOUT_MS,
    perConnectionBodyBytes: e.GATEWAY_MAX_CONNECTION_BODY_BYTES ?? Math.max(4 * 1024 * 1024, maxBody),
    globalBodyBytes: e.GATEWAY_MAX_INFLIGHT_BODY_BYTES ?? Math.max(64 * 1024 * 1024, 8 * maxBody),
  };
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new ConfigError(
      `GATEWAY_HEADERS_TIMEOUT_MS (${limits.headersTimeoutMs}) must not exceed GATEWAY_REQUEST_TIMEOUT_MS ` +
        `(${limits.requestTimeoutMs}); raise the request timeout or lower the headers timeout.`,
    );
  }
  for (const [name, value] of [
    ['GATEWAY_MAX_CONNECTION_BODY_BYTES', limits.perConnectionBodyBytes],
    ['GATEWAY_MAX_INFLIGHT_BODY_BYTES', limits.globalBodyBytes],
  ] as const) {
    if (value < maxBody) {
      throw new ConfigError(
        `${name} (${value}) must be at least GATEWAY_MAX_BODY_BYTES (${maxBody}), ` +
          'or no body of the largest size could be read.',
      );
    }
  }
  return limits;
}

/** Parses `url` or `name=url,name2=url2` (and tokens alike: one token for all, or `name=token,...`). */
function parseEngines(urls: string, tokens: string): Map<string, { url: string; token: string }> {
  const named = (value: string): Map<string, string> => {
    const out = new Map<string, string>();
    for (const part of value
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0)) {
      const m = /^([a-z0-9_-]{1,64})=(.+)$/.exec(part);
      if (m !== null && !/^https?:$/.test(`${m[1] ?? ''}:`)) out.set(m[1] ?? '', m[2] ?? '');
      else out.set('default', part);
    }
    return out;
  };
  const urlMap = named(urls);
  const tokenMap =
    tokens.includes('=') && !tokens.trim().includes(' ') && urlMap.size > 1 ? named(tokens) : new Map<string, string>();
  const engines = new Map<string, { url: string; token: string }>();
  for (const [name, u] of urlMap) {
    if (!/^https?:\/\/[^\s]+$/.test(u)) throw new ConfigError(`GATEWAY_ENGINE_URL: "${u}" is not an http(s) URL`);
    const token = tokenMap.get(name) ?? (tokenMap.size === 0 ? tokens : undefined);
    if (token === undefined || token.length === 0)
      throw new ConfigError(`GATEWAY_ENGINE_TOKEN: no token for engine "${name}"`);
    engines.set(name, { url: stripSlash(u), token });
  }
  if (engines.size === 0) throw new ConfigError('GATEWAY_ENGINE_URL is required');
  if (!engines.has('default')) {
    const first = engines.values().next().value;
    if (first !== undefined) engines.set('default', first);
  }
  return engines;
}

/** The variables the gateway accepts (deployment files are checked against them). */
export { schema as gatewayEnvSchema };
