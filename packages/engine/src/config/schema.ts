import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';

/**
 * Engine settings, read from the environment once at start. Every rule lives in this schema so a bad
 * value fails at start with one line naming the variable, never at the first request.
 */

const port = z.coerce
  .number({ error: 'must be a number' })
  .int('must be a whole number')
  .min(0, 'must be between 0 and 65535')
  .max(65535, 'must be between 0 and 65535');

const optionalText = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

const bool = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off', ''], {
    error: 'must be true or false',
  })
  .transform((v) => v === '1' || v === 'true' || v === 'yes' || v === 'on')
  .optional();

const postgresUrl = z
  .string()
  .trim()
  .refine((v) => /^postgres(ql)?:\/\//.test(v), 'must be a postgres:// or postgresql:// URL')
  .refine((v) => URL.canParse(v), 'is not a valid URL');

const httpUrl = z
  .string()
  .trim()
  .refine((v) => URL.canParse(v) && /^https?:/.test(v), 'must be an http:// or https:// URL');

const masterKey = z
  .string()
  .trim()
  .refine((v) => /^[A-Za-z0-9+/]+={0,2}$/.test(v), 'is not base64 (generate one with: openssl rand -base64 32)')
  .refine(
    (v) => Buffer.from(v, 'base64').length === 32,
    'must decode to exactly 32 bytes (generate one with: openssl rand -base64 32)',
  );

/** An external database's connection settings when none are given. */
export const DEFAULT_DATABASE_SETTINGS = { poolSize: 10, statementTimeoutMs: 30_000 } as const;

/**
 * Recall's tiers when not set (docs/decisions.md): on a server, banks of 100,000 memories or more are searched in
 * Postgres; on the embedded database only banks the cache cannot hold are (there an index build stops every other
 * statement while it runs, and the in-memory copy answers a bank it holds faster). The in-memory copies take at most
 * 512 MiB.
 */
export const DEFAULT_RECALL_SETTINGS = {
  postgresTierMinMemories: 100_000,
  embeddedPostgresTierMinMemories: Number.POSITIVE_INFINITY,
  cacheMib: 512,
} as const;

export const engineEnvSchema = z.object({
  MNEMOS_HOME: optionalText,
  MNEMOS_API_PORT: port.default(8888),
  MNEMOS_API_HOST: z.string().trim().min(1, 'must not be empty').default('0.0.0.0'),
  MNEMOS_API_DATABASE_URL: postgresUrl.optional(),
  MNEMOS_API_DATABASE_POOL_SIZE: z.coerce
    .number({ error: 'must be a number of connections' })
    .int('must be a whole number of connections')
    .min(1, 'must be between 1 and 1000')
    .max(1000, 'must be between 1 and 1000')
    .default(DEFAULT_DATABASE_SETTINGS.poolSize),
  MNEMOS_API_DATABASE_STATEMENT_TIMEOUT_MS: z.coerce
    .number({ error: 'must be a number of milliseconds (0 for no limit)' })
    .int('must be a whole number of milliseconds')
    .min(0, 'must be 0 (no limit) or between 100 and 3600000 ms')
    .max(3_600_000, 'must be 0 (no limit) or between 100 and 3600000 ms')
    .refine((v) => v === 0 || v >= 100, 'must be 0 (no limit) or between 100 and 3600000 ms')
    .default(DEFAULT_DATABASE_SETTINGS.statementTimeoutMs),
  MNEMOS_API_JOBS_POLL_INTERVAL_MS: z.coerce
    .number({ error: 'must be a number of milliseconds' })
    .int('must be a whole number of milliseconds')
    .min(100, 'must be between 100 and 3600000 ms')
    .max(3_600_000, 'must be between 100 and 3600000 ms')
    .default(5_000),
  MNEMOS_API_RECALL_POSTGRES_TIER_MIN_MEMORIES: z
    .string()
    .trim()
    .refine((v) => v === 'off' || /^\d{0,12}$/.test(v), 'must be a whole number of memories (0: every bank) or off')
    .optional()
    // 'off': the tier is off; 'unset': the default for the database in use (config/load.ts).
    .transform((v): number | 'off' | 'unset' =>
      v === undefined || v === '' ? 'unset' : v === 'off' ? 'off' : Number(v),
    ),
  MNEMOS_API_RECALL_COMPACT_MIN_MEMORIES: z
    .string()
    .trim()
    .refine((v) => /^\d{0,12}$/.test(v), 'must be a whole number of memories (0: every bank)')
    .optional()
    // Unset: only banks whose full copy the cache cannot hold are held compact.
    .transform((v): number => (v === undefined || v === '' ? Number.POSITIVE_INFINITY : Number(v))),
  MNEMOS_API_RECALL_CACHE_MIB: z.coerce
    .number({ error: 'must be a number of MiB' })
    .int('must be a whole number of MiB')
    .min(1, 'must be between 1 and 1048576 MiB')
    .max(1_048_576, 'must be between 1 and 1048576 MiB')
    .default(DEFAULT_RECALL_SETTINGS.cacheMib),
  MNEMOS_API_EMBEDDINGS_LITELLM_MODEL: optionalText,
  MNEMOS_API_EMBEDDINGS_LITELLM_API_KEY: optionalText,
  MNEMOS_API_EMBEDDINGS_LITELLM_API_BASE: httpUrl.optional(),
  MNEMOS_API_EMBEDDINGS_GEMINI_API_KEY: optionalText,
  MNEMOS_API_EMBEDDINGS_GEMINI_MODEL: optionalText,
  MNEMOS_API_EMBEDDINGS_GEMINI_API_BASE: httpUrl.optional(),
  MNEMOS_API_EMBEDDINGS_COHERE_API_KEY: optionalText,
  MNEMOS_API_EMBEDDINGS_COHERE_MODEL: optionalText,
  MNEMOS_API_EMBEDDINGS_COHERE_API_BASE: httpUrl.optional(),
  MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: optionalText,
  MNEMOS_API_EMBEDDINGS_LOCAL_FORCE_CPU: bool,
  // Where a local model named by hub id is downloaded from on first start (a mirror, or a test server).
  MNEMOS_API_EMBEDDINGS_HUB_URL: httpUrl.default('https://huggingface.co'),
  MNEMOS_API_EMBEDDINGS_LOCAL_DTYPE: z.enum(['fp32', 'q8'], { error: 'must be fp32 or q8' }).default('fp32'),
  MNEMOS_API_EMBEDDINGS_DIMENSION: z.coerce.number().int().positive('must be a positive whole number').optional(),
  MNEMOS_API_LLM_PROVIDER: z
    .enum(['openai', 'gemini', 'vertex', 'litellm', 'none', ''], {
      error: 'must be one of openai, gemini, vertex, litellm (or unset for no LLM)',
    })
    .optional(),
  MNEMOS_API_LLM_MODEL: optionalText,
  MNEMOS_API_LLM_API_KEY: optionalText,
  MNEMOS_API_LLM_BASE_URL: httpUrl.optional(),
  MNEMOS_API_LLM_CONCURRENCY: z.coerce
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(1, 'must be between 1 and 256')
    .max(256, 'must be between 1 and 256')
    .default(4),
  MNEMOS_API_LLM_TIMEOUT_MS: z.coerce
    .number({ error: 'must be a number of milliseconds' })
    .int('must be a whole number of milliseconds')
    .min(100, 'must be at least 100 ms')
    .default(60_000),
  MNEMOS_API_LLM_MAX_RETRIES: z.coerce
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(0, 'must be between 0 and 10')
    .max(10, 'must be between 0 and 10')
    .default(3),
  MNEMOS_API_LLM_VERTEX_PROJECT: optionalText,
  MNEMOS_API_LLM_VERTEX_LOCATION: optionalText,
  MNEMOS_API_ENCRYPTION_MASTER_KEY: masterKey.optional(),
  MNEMOS_API_AUTH_TOKEN: z
    .string()
    .min(16, 'must be at least 16 characters (generate one with: openssl rand -hex 32)')
    .optional(),
  MNEMOS_API_MAX_BODY_BYTES: z.coerce
    .number({ error: 'must be a number of bytes' })
    .int('must be a whole number of bytes')
    .min(1024, 'must be at least 1024 bytes')
    .default(1024 * 1024),
  MNEMOS_API_MAX_IMPORT_BYTES: z.coerce
    .number({ error: 'must be a number of bytes' })
    .int('must be a whole number of bytes')
    .min(1024, 'must be at least 1024 bytes')
    .default(64 * 1024 * 1024),
  MNEMOS_API_HEADERS_TIMEOUT_MS: z.coerce
    .number({ error: 'must be a number of milliseconds' })
    .int('must be a whole number of milliseconds')
    .min(100, 'must be between 100 and 600000 ms')
    .max(600_000, 'must be between 100 and 600000 ms')
    .default(20_000),
  MNEMOS_API_REQUEST_TIMEOUT_MS: z.coerce
    .number({ error: 'must be a number of milliseconds' })
    .int('must be a whole number of milliseconds')
    .min(100, 'must be between 100 and 3600000 ms')
    .max(3_600_000, 'must be between 100 and 3600000 ms')
    .default(60_000),
  MNEMOS_API_MAX_CONNECTION_BODY_BYTES: z.coerce
    .number({ error: 'must be a number of bytes' })
    .int('must be a whole number of bytes')
    .min(1024, 'must be at least 1024 bytes')
    .optional(),
  MNEMOS_API_MAX_INFLIGHT_BODY_BYTES: z.coerce
    .number({ error: 'must be a number of bytes' })
    .int('must be a whole number of bytes')
    .min(1024, 'must be at least 1024 bytes')
    .optional(),
  MNEMOS_API_LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      error: 'must be one of fatal, error, warn, info, debug, trace, silent',
    })
    .default('info'),
  MNEMOS_API_LOG_FORMAT: z
    .enum(['pretty', 'json'], { error: 'must be pretty or json (unset: pretty on a terminal, json otherwise)' })
    .optional(),
});

/**
 * MNEMOS_* variables read outside the engine's settings: the client commands' address and credentials, the second key
 * of `mnemos rotate-key`. Prefixes cover the test and benchmark settings. Anything else under MNEMOS_ is a typo.
 */
export const OTHER_MNEMOS_VARIABLES = [
  'MNEMOS_URL',
  'MNEMOS_API_KEY',
  'MNEMOS_TENANT',
  'MNEMOS_BANK',
  'MNEMOS_API_ENCRYPTION_NEW_MASTER_KEY',
];
export const OTHER_MNEMOS_PREFIXES = ['MNEMOS_TEST_', 'MNEMOS_BENCH_', 'MNEMOS_FAKE_'];

export type EngineEnv = z.infer<typeof engineEnvSchema>;

export const DEFAULT_LOCAL_MODEL = 'Xenova/all-MiniLM-L6-v2';

export function defaultHome(): string {
  return join(homedir(), '.mnemos');
}
