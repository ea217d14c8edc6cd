import { isAbsolute, resolve } from 'node:path';
import {
  defaultHome,
  DEFAULT_LOCAL_MODEL,
  DEFAULT_RECALL_SETTINGS,
  engineEnvSchema,
  type EngineEnv,
} from './schema.js';

/** A setting that cannot work. `message` is one line: the variable, what is wrong, and the fix. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export type EmbeddingsConfig =
  | { family: 'local'; model: string; dtype: 'fp32' | 'q8'; forceCpu: boolean; hubUrl: string }
  | { family: 'litellm'; model: string; apiKey: string | undefined; apiBase: string; dimension: number | undefined }
  | { family: 'gemini'; model: string; apiKey: string; apiBase: string; dimension: number | undefined }
  | { family: 'cohere'; model: string; apiKey: string; apiBase: string; dimension: number | undefined };

export interface LlmConfig {
  provider: 'openai' | 'gemini' | 'vertex' | 'litellm';
  model: string;
  apiKey: string | undefined;
  baseUrl: string | undefined;
  /** Most LLM calls in flight at once (extraction workers and reflect share it). */
  concurrency: number;
  /** Per-attempt timeout of one LLM HTTP call. */
  timeoutMs: number;
  /** Retries of one call on 429/5xx/timeouts (with backoff, honouring Retry-After). */
  maxRetries: number;
  /** Vertex AI only: Google Cloud project and location (else GOOGLE_CLOUD_PROJECT / GOOGLE_CLOUD_LOCATION). */
  vertexProject: string | undefined;
  vertexLocation: string | undefined;
}

export interface EngineConfig {
  home: string;
  port: number;
  host: string;
  databaseUrl: string | undefined;
  /** Connection settings of an external database (unused by the embedded one). */
  database: DatabaseSettings;
  /** How often idle job workers look for work they were not woken for (retries, jobs of a stopped engine). */
  jobsPollIntervalMs: number;
  /** Recall's two tiers: where the Postgres tier starts, and the in-memory tier's cache bound. */
  recall: RecallSettings;
  embeddings: EmbeddingsConfig;
  llm: LlmConfig | undefined;
  encryptionMasterKey: Buffer | undefined;
  authToken: string | undefined;
  maxBodyBytes: number;
  /** Largest import body (POST .../import), read as a stream: its own limit, not the JSON body limit. */
  maxImportBytes: number;
  /** Time limits and in-flight body budgets of the HTTP server (`@mnemos/http-input`, body-budget.ts). */
  http: HttpLimits;
  logLevel: EngineEnv['MNEMOS_API_LOG_LEVEL'];
  /** Undefined: pretty on a terminal, JSON otherwise. */
  logFormat: EngineEnv['MNEMOS_API_LOG_FORMAT'];
}

export interface DatabaseSettings {
  /** Most connections held open at once. */
  poolSize: number;
  /** Longest one statement may run before the server cancels it; 0 for no limit. */
  statementTimeoutMs: number;
}

export interface RecallSettings {
  /**
   * Banks of at least this many memories are searched in Postgres, on a server only while their compact copy loads or
   * when it does not fit (Infinity: only banks the cache cannot hold);
   * undefined: never (the tier is off).
   */
  postgresTierMinMemories: number | undefined;
  /** The in-memory bank copies take at most this many bytes (least recently used banks are dropped). */
  cacheBytes: number;
  /**
   * Banks of at least this many memories are held as compact copies (Infinity: only banks whose full copy the cache
   * cannot hold).
   */
  compactMinMemories: number;
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

type Env = Record<string, string | undefined>;

/** Parses and validates the engine's settings; throws ConfigError with one line on the first bad value. */
export function loadEngineConfig(env: Env = process.env): EngineConfig {
  const parsed = engineEnvSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = issue?.path.join('.') ?? 'configuration';
    const value = typeof issue?.path[0] === 'string' ? env[issue.path[0]] : undefined;
    const shown = value === undefined ? '' : ` (got ${JSON.stringify(redact(variable, value))})`;
    throw new ConfigError(`${variable} ${issue?.message ?? 'is invalid'}${shown}.`);
  }
  const e = parsed.data;
  return {
    home: resolve(e.MNEMOS_HOME ?? defaultHome()),
    port: e.MNEMOS_API_PORT,
    host: e.MNEMOS_API_HOST,
    databaseUrl: e.MNEMOS_API_DATABASE_URL,
    database: {
      poolSize: e.MNEMOS_API_DATABASE_POOL_SIZE,
      statementTimeoutMs: e.MNEMOS_API_DATABASE_STATEMENT_TIMEOUT_MS,
    },
    jobsPollIntervalMs: e.MNEMOS_API_JOBS_POLL_INTERVAL_MS,
    recall: {
      postgresTierMinMemories: tierThreshold(
        e.MNEMOS_API_RECALL_POSTGRES_TIER_MIN_MEMORIES,
        e.MNEMOS_API_DATABASE_URL !== undefined,
      ),
      cacheBytes: e.MNEMOS_API_RECALL_CACHE_MIB * 1024 * 1024,
      compactMinMemories: e.MNEMOS_API_RECALL_COMPACT_MIN_MEMORIES,
    },
    embeddings: resolveEmbeddings(e),
    llm: resolveLlm(e, env),
    encryptionMasterKey: e.MNEMOS_API_ENCRYPTION_MASTER_KEY
      ? Buffer.from(e.MNEMOS_API_ENCRYPTION_MASTER_KEY, 'base64')
      : undefined,
    authToken: e.MNEMOS_API_AUTH_TOKEN,
    maxBodyBytes: e.MNEMOS_API_MAX_BODY_BYTES,
    maxImportBytes: e.MNEMOS_API_MAX_IMPORT_BYTES,
    http: httpLimits(e),
    logLevel: e.MNEMOS_API_LOG_LEVEL,
    logFormat: e.MNEMOS_API_LOG_FORMAT,
  };
}

/** Budgets default to room for a few bodies per connection and many at once, never less than one whole body. */
function httpLimits(e: EngineEnv): HttpLimits {
  const maxBody = e.MNEMOS_API_MAX_BODY_BYTES;
  const limits = {
    headersTimeoutMs: e.MNEMOS_API_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: e.MNEMOS_API_REQUEST_TIMEOUT_MS,
    perConnectionBodyBytes: e.MNEMOS_API_MAX_CONNECTION_BODY_BYTES ?? Math.max(4 * 1024 * 1024, maxBody),
    globalBodyBytes: e.MNEMOS_API_MAX_INFLIGHT_BODY_BYTES ?? Math.max(64 * 1024 * 1024, 8 * maxBody),
  };
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new ConfigError(
      `MNEMOS_API_HEADERS_TIMEOUT_MS (${limits.headersTimeoutMs}) must not exceed MNEMOS_API_REQUEST_TIMEOUT_MS ` +
        `(${limits.requestTimeoutMs}); raise the request timeout or lower the headers timeout.`,
    );
  }
  for (const [name, value] of [
    ['MNEMOS_API_MAX_CONNECTION_BODY_BYTES', limits.perConnectionBodyBytes],
    ['MNEMOS_API_MAX_INFLIGHT_BODY_BYTES', limits.globalBodyBytes],
  ] as const) {
    if (value < maxBody) {
      throw new ConfigError(
        `${name} (${value}) must be at least MNEMOS_API_MAX_BODY_BYTES (${maxBody}), ` +
          'or no body of the largest size could be read.',
      );
    }
  }
  return limits;
}

function redact(variable: string, value: string): string {
  return /KEY|TOKEN|SECRET/.test(variable) ? '<redacted>' : value;
}

function resolveEmbeddings(e: EngineEnv): EmbeddingsConfig {
  const families: Array<[string, boolean]> = [
    ['MNEMOS_API_EMBEDDINGS_LITELLM_*', e.MNEMOS_API_EMBEDDINGS_LITELLM_MODEL !== undefined],
    ['MNEMOS_API_EMBEDDINGS_GEMINI_*', e.MNEMOS_API_EMBEDDINGS_GEMINI_API_KEY !== undefined],
    ['MNEMOS_API_EMBEDDINGS_COHERE_*', e.MNEMOS_API_EMBEDDINGS_COHERE_API_KEY !== undefined],
    ['MNEMOS_API_EMBEDDINGS_LOCAL_MODEL', e.MNEMOS_API_EMBEDDINGS_LOCAL_MODEL !== undefined],
  ];
  const chosen = families.filter(([, on]) => on).map(([name]) => name);
  if (chosen.length > 1) {
    throw new ConfigError(
      `Two embedding families are set (${chosen.join(' and ')}); set exactly one of them and unset the other.`,
    );
  }
  const dimension = e.MNEMOS_API_EMBEDDINGS_DIMENSION;
  if (e.MNEMOS_API_EMBEDDINGS_LITELLM_MODEL !== undefined) {
    if (
      e.MNEMOS_API_EMBEDDINGS_LITELLM_API_BASE === undefined &&
      e.MNEMOS_API_EMBEDDINGS_LITELLM_API_KEY === undefined
    ) {
      throw new ConfigError(
        'MNEMOS_API_EMBEDDINGS_LITELLM_MODEL is set but neither MNEMOS_API_EMBEDDINGS_LITELLM_API_BASE nor ..._API_KEY is; set the proxy URL (or an OpenAI API key).',
      );
    }
    return {
      family: 'litellm',
      model: e.MNEMOS_API_EMBEDDINGS_LITELLM_MODEL,
      apiKey: e.MNEMOS_API_EMBEDDINGS_LITELLM_API_KEY,
      apiBase: e.MNEMOS_API_EMBEDDINGS_LITELLM_API_BASE ?? 'https://api.openai.com/v1',
      dimension,
    };
  }
  if (e.MNEMOS_API_EMBEDDINGS_GEMINI_API_KEY !== undefined) {
    return {
      family: 'gemini',
      model: e.MNEMOS_API_EMBEDDINGS_GEMINI_MODEL ?? 'text-embedding-004',
      apiKey: e.MNEMOS_API_EMBEDDINGS_GEMINI_API_KEY,
      apiBase: e.MNEMOS_API_EMBEDDINGS_GEMINI_API_BASE ?? 'https://generativelanguage.googleapis.com',
      dimension,
    };
  }
  if (e.MNEMOS_API_EMBEDDINGS_COHERE_API_KEY !== undefined) {
    return {
      family: 'cohere',
      model: e.MNEMOS_API_EMBEDDINGS_COHERE_MODEL ?? 'embed-english-v3.0',
      apiKey: e.MNEMOS_API_EMBEDDINGS_COHERE_API_KEY,
      apiBase: e.MNEMOS_API_EMBEDDINGS_COHERE_API_BASE ?? 'https://api.cohere.com',
      dimension,
    };
  }
  if (e.MNEMOS_API_EMBEDDINGS_GEMINI_MODEL !== undefined || e.MNEMOS_API_EMBEDDINGS_COHERE_MODEL !== undefined) {
    throw new ConfigError(
      'An embeddings model is named (GEMINI_MODEL or COHERE_MODEL) without its API key; set MNEMOS_API_EMBEDDINGS_GEMINI_API_KEY or MNEMOS_API_EMBEDDINGS_COHERE_API_KEY.',
    );
  }
  const model = e.MNEMOS_API_EMBEDDINGS_LOCAL_MODEL ?? DEFAULT_LOCAL_MODEL;
  return {
    family: 'local',
    // A folder path (absolute, or starting with ./ or ../) loads from disk; anything else is a Hugging Face id.
    model: isAbsolute(model) || model.startsWith('.') ? resolve(model) : model,
    dtype: e.MNEMOS_API_EMBEDDINGS_LOCAL_DTYPE,
    forceCpu: e.MNEMOS_API_EMBEDDINGS_LOCAL_FORCE_CPU ?? false,
    hubUrl: e.MNEMOS_API_EMBEDDINGS_HUB_URL,
  };
}

function resolveLlm(e: EngineEnv, env: Env): LlmConfig | undefined {
  const provider = e.MNEMOS_API_LLM_PROVIDER;
  if (provider === undefined || provider === '' || provider === 'none') {
    return undefined;
  }
  if (e.MNEMOS_API_LLM_MODEL === undefined) {
    throw new ConfigError(
      `MNEMOS_API_LLM_PROVIDER is ${provider} but MNEMOS_API_LLM_MODEL is not set; name the model (for example gpt-4o-mini or gemini-2.0-flash).`,
    );
  }
  if (
    (provider === 'openai' || provider === 'gemini') &&
    e.MNEMOS_API_LLM_API_KEY === undefined &&
    e.MNEMOS_API_LLM_BASE_URL === undefined
  ) {
    throw new ConfigError(
      `MNEMOS_API_LLM_PROVIDER is ${provider} but MNEMOS_API_LLM_API_KEY is not set; set the provider's API key.`,
    );
  }
  if (provider === 'litellm' && e.MNEMOS_API_LLM_BASE_URL === undefined) {
    throw new ConfigError(
      'MNEMOS_API_LLM_PROVIDER is litellm but MNEMOS_API_LLM_BASE_URL is not set; set the URL of your LiteLLM proxy.',
    );
  }
  const vertexProject = e.MNEMOS_API_LLM_VERTEX_PROJECT ?? env['GOOGLE_CLOUD_PROJECT'];
  if (provider === 'vertex' && e.MNEMOS_API_LLM_API_KEY === undefined && vertexProject === undefined) {
    throw new ConfigError(
      'MNEMOS_API_LLM_PROVIDER is vertex but neither MNEMOS_API_LLM_VERTEX_PROJECT (with Google application default credentials) nor MNEMOS_API_LLM_API_KEY is set; set one of them.',
    );
  }
  return {
    provider,
    model: e.MNEMOS_API_LLM_MODEL,
    apiKey: e.MNEMOS_API_LLM_API_KEY,
    baseUrl: e.MNEMOS_API_LLM_BASE_URL,
    concurrency: e.MNEMOS_API_LLM_CONCURRENCY,
    timeoutMs: e.MNEMOS_API_LLM_TIMEOUT_MS,
    maxRetries: e.MNEMOS_API_LLM_MAX_RETRIES,
    vertexProject,
    vertexLocation: e.MNEMOS_API_LLM_VERTEX_LOCATION ?? env['GOOGLE_CLOUD_LOCATION'],
  };
}

/** The Postgres tier's threshold as set, or the default for the database in use (undefined: the tier is off). */
function tierThreshold(setting: number | 'off' | 'unset', external: boolean): number | undefined {
  if (setting === 'off') return undefined;
  if (setting !== 'unset') return setting;
  return external
    ? DEFAULT_RECALL_SETTINGS.postgresTierMinMemories
    : DEFAULT_RECALL_SETTINGS.embeddedPostgresTierMinMemories;
}
