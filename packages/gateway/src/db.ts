// Control-plane Postgres: one pool, numbered migrations applied at start under an advisory lock
// (several gateways may start at once). Needs plain Postgres 15+, no extensions. This is the gateway's database handle;
// SQL lives here and in the storage modules (store.ts and the `*-store.ts` files), which take the pool as an argument.
import pg from 'pg';

const MIGRATIONS: readonly string[] = [
  // 1: accounts, projects, API keys, OAuth storage, usage counters, shared secrets.
  `
  CREATE TABLE accounts (
    id text PRIMARY KEY,
    email text NOT NULL UNIQUE,
    name text,
    password_hash text,
    created_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE TABLE projects (
    id text PRIMARY KEY,
    account_id text REFERENCES accounts(id) ON DELETE SET NULL,
    name text NOT NULL,
    plan text NOT NULL DEFAULT 'free',
    quotas jsonb NOT NULL DEFAULT '{}'::jsonb,
    engine text NOT NULL DEFAULT 'default',
    tenant text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE INDEX projects_account_idx ON projects (account_id);
  CREATE TABLE api_keys (
    id text PRIMARY KEY,
    project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name text,
    prefix text NOT NULL UNIQUE,
    hash bytea NOT NULL,
    scopes text[] NOT NULL,
    banks text[],
    spaces text[],
    rate_limit_per_minute integer,
    expires_at timestamptz,
    revoked_at timestamptz,
    last_used_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE INDEX api_keys_project_idx ON api_keys (project_id);
  CREATE TABLE oauth_clients (
    client_id text PRIMARY KEY,
    project_id text REFERENCES projects(id) ON DELETE CASCADE,
    name text,
    scopes text[] NOT NULL,
    secret_salt text,
    metadata jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE INDEX oauth_clients_project_idx ON oauth_clients (project_id);
  CREATE TABLE oauth_store (
    model text NOT NULL,
    id text NOT NULL,
    payload jsonb NOT NULL,
    grant_id text,
    uid text,
    user_code text,
    client_id text,
    expires_at timestamptz,
    consumed_at timestamptz,
    PRIMARY KEY (model, id)
  );
  CREATE INDEX oauth_store_grant_idx ON oauth_store (grant_id);
  CREATE INDEX oauth_store_uid_idx ON oauth_store (uid);
  CREATE INDEX oauth_store_client_idx ON oauth_store (client_id);
  CREATE INDEX oauth_store_expires_idx ON oauth_store (expires_at);
  CREATE TABLE usage_counters (
    project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    period text NOT NULL,
    metric text NOT NULL,
    used bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (project_id, period, metric)
  );
  CREATE TABLE gateway_secrets (
    name text PRIMARY KEY,
    value jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  );
  `,
  // 2: quota leases (each gateway instance charges requests against blocks leased from usage_counters; quota.ts).
  `
  ALTER TABLE usage_counters ADD COLUMN leased bigint NOT NULL DEFAULT 0;
  CREATE TABLE gateway_instances (
    id text PRIMARY KEY,
    started_at timestamptz NOT NULL DEFAULT now(),
    seen_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE TABLE quota_leases (
    instance_id text NOT NULL,
    project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    period text NOT NULL,
    metric text NOT NULL,
    units bigint NOT NULL DEFAULT 0,
    acked_at timestamptz,
    PRIMARY KEY (instance_id, project_id, period, metric)
  );
  CREATE INDEX quota_leases_counter_idx ON quota_leases (project_id, period, metric);
  `,
  // 3: OAuth clients carry the bank, space and expiry limits of the credential that created them.
  `
  ALTER TABLE oauth_clients ADD COLUMN banks text[], ADD COLUMN spaces text[], ADD COLUMN expires_at timestamptz;
  `,
  // 4: console sessions (the session cookie holds a random token; only its hash is stored).
  `
  CREATE TABLE account_sessions (
    token_hash bytea PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    csrf_token text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
  );
  CREATE INDEX account_sessions_expires_idx ON account_sessions (expires_at);
  `,
  // 5: counted units per project, UTC day and metric (the console's daily usage chart; usage-daily.ts).
  `
  CREATE TABLE usage_daily (
    project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    day date NOT NULL,
    metric text NOT NULL,
    used bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (project_id, day, metric)
  );
  `,
];

export type Pool = pg.Pool;

export function createPool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, idleTimeoutMillis: 30_000, connectionTimeoutMillis: 5_000 });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  return pool;
}

/** Answers when the control plane does (the health check); throws when it is away. */
export async function ping(pool: pg.Pool): Promise<void> {
  await pool.query('SELECT 1');
}

export async function migrate(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock(724011)');
    await client.query(
      'CREATE TABLE IF NOT EXISTS gateway_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = await client.query<{ version: number }>('SELECT version FROM gateway_migrations');
    const applied = new Set(done.rows.map((r) => r.version));
    for (let i = 0; i < MIGRATIONS.length; i++) {
      const version = i + 1;
      if (applied.has(version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(MIGRATIONS[i] ?? '');
        await client.query('INSERT INTO gateway_migrations (version) VALUES ($1)', [version]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      }
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock(724011)').catch(() => undefined);
    client.release();
  }
}
