// Control-plane data access: accounts, projects, API keys, usage reports. One of the gateway's storage modules (with
// db.ts and the `*-store.ts` files): OAuth storage is in oauth/client-store.ts and oauth/token-store.ts, console
// sessions in account/session-store.ts, the quota leases that charge requests in quota-store.ts.
import type { Pool } from './db.js';
import { hashPassword, newApiKey, newId } from './ids.js';
import { limitsFor, METRICS, periodOf, type Limits, type Metric, type QuotaOverrides } from './plans.js';
import type { Scope } from './scopes.js';
import { dailyUsage, daysSoFar, type DailyUsage, type DayCount } from './usage-daily.js';

export interface Account {
  id: string;
  email: string;
  name: string | null;
  created_at: string;
}

export interface Project {
  id: string;
  account_id: string | null;
  name: string;
  plan: string;
  quotas: Partial<Limits>;
  engine: string;
  tenant: string;
  created_at: string;
}

export interface ApiKeyRow {
  id: string;
  project_id: string;
  name: string | null;
  prefix: string;
  hash: Buffer;
  scopes: string[];
  banks: string[] | null;
  spaces: string[] | null;
  rate_limit_per_minute: number | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
}

/** The bank, space and expiry limits an OAuth client was created with (none for registered clients). */
export interface ClientLimits {
  banks: string[] | null;
  spaces: string[] | null;
  expires_at: Date | null;
}

export interface KeyInput {
  name?: string | undefined;
  scopes?: Scope[] | undefined;
  banks?: string[] | undefined;
  spaces?: string[] | undefined;
  expires_at?: string | undefined;
  rate_limit_per_minute?: number | undefined;
}

/** A key as stored: every limit resolved (null: none). */
export interface NewKey {
  name: string | null;
  scopes: Scope[];
  banks: string[] | null;
  spaces: string[] | null;
  expires_at: string | null;
  rate_limit_per_minute: number | null;
}

export interface PublicKey {
  id: string;
  name: string | null;
  prefix: string;
  scopes: string[];
  banks: string[] | null;
  spaces: string[] | null;
  rate_limit_per_minute: number | null;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

export function publicKey(row: ApiKeyRow): PublicKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    banks: row.banks,
    spaces: row.spaces,
    rate_limit_per_minute: row.rate_limit_per_minute,
    expires_at: iso(row.expires_at),
    revoked_at: iso(row.revoked_at),
    last_used_at: iso(row.last_used_at),
    created_at: row.created_at.toISOString(),
  };
}

interface ProjectRow extends Omit<Project, 'created_at'> {
  created_at: Date;
}

const toProject = (r: ProjectRow): Project => ({ ...r, created_at: r.created_at.toISOString() });

export interface UsageReport {
  period: string;
  resets_at: string;
  plan: string;
  memories: { used: number; limit: number };
  recalls: { used: number; limit: number };
  reflects: { used: number; limit: number };
  daily: DailyUsage[];
}

export class Store {
  constructor(readonly pool: Pool) {}

  async createAccount(input: {
    email: string;
    name?: string | undefined;
    password?: string | undefined;
  }): Promise<Account | null> {
    const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
    const res = await this.pool.query<Account & { created_at: Date }>(
      `INSERT INTO accounts (id, email, name, password_hash) VALUES ($1, lower($2), $3, $4)
       ON CONFLICT (email) DO NOTHING RETURNING id, email, name, created_at`,
      [newId('acc'), input.email, input.name ?? null, passwordHash],
    );
    const row = res.rows[0];
    return row === undefined ? null : { ...row, created_at: row.created_at.toISOString() };
  }

  async accountCredentials(email: string): Promise<{ id: string; password_hash: string | null } | undefined> {
    const res = await this.pool.query<{ id: string; password_hash: string | null }>(
      'SELECT id, password_hash FROM accounts WHERE email = lower($1)',
      [email],
    );
    return res.rows[0];
  }

  async accountExists(id: string): Promise<boolean> {
    const res = await this.pool.query('SELECT 1 FROM accounts WHERE id = $1', [id]);
    return res.rowCount === 1;
  }

  async createProject(input: {
    name: string;
    account_id?: string | undefined;
    plan?: string | undefined;
    engine?: string | undefined;
  }): Promise<Project> {
    const id = newId('prj');
    const res = await this.pool.query<ProjectRow>(
      `INSERT INTO projects (id, account_id, name, plan, engine, tenant) VALUES ($1, $2, $3, $4, $5, $1) RETURNING *`,
      [id, input.account_id ?? null, input.name, input.plan ?? 'free', input.engine ?? 'default'],
    );
    const row = res.rows[0];
    if (row === undefined) throw new Error('project insert returned no row');
    return toProject(row);
  }

  async getProject(id: string): Promise<Project | undefined> {
    const res = await this.pool.query<ProjectRow>('SELECT * FROM projects WHERE id = $1', [id]);
    const row = res.rows[0];
    return row === undefined ? undefined : toProject(row);
  }

  async listProjects(accountId?: string): Promise<Project[]> {
    const res =
      accountId === undefined
        ? await this.pool.query<ProjectRow>('SELECT * FROM projects ORDER BY created_at, id')
        : await this.pool.query<ProjectRow>('SELECT * FROM projects WHERE account_id = $1 ORDER BY created_at, id', [
            accountId,
          ]);
    return res.rows.map(toProject);
  }

  async updateProject(
    id: string,
    patch: {
      plan?: string | undefined;
      quotas?: QuotaOverrides | undefined;
      engine?: string | undefined;
      name?: string | undefined;
    },
  ): Promise<Project | undefined> {
    const res = await this.pool.query<ProjectRow>(
      `UPDATE projects SET
         plan = COALESCE($2, plan),
         quotas = jsonb_strip_nulls(quotas || COALESCE($3::jsonb, '{}'::jsonb)),
         engine = COALESCE($4, engine),
         name = COALESCE($5, name)
       WHERE id = $1 RETURNING *`,
      [
        id,
        patch.plan ?? null,
        patch.quotas === undefined ? null : JSON.stringify(patch.quotas),
        patch.engine ?? null,
        patch.name ?? null,
      ],
    );
    const row = res.rows[0];
    return row === undefined ? undefined : toProject(row);
  }

  // --- API keys ---

  async createKey(projectId: string, input: NewKey): Promise<{ key: string; row: ApiKeyRow }> {
    const { key, prefix, hash } = newApiKey();
    const res = await this.pool.query<ApiKeyRow>(
      `INSERT INTO api_keys (id, project_id, name, prefix, hash, scopes, banks, spaces, rate_limit_per_minute, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
      [
        newId('key'),
        projectId,
        input.name,
        prefix,
        hash,
        input.scopes,
        input.banks,
        input.spaces,
        input.rate_limit_per_minute,
        input.expires_at,
      ],
    );
    const row = res.rows[0];
    if (row === undefined) throw new Error('key insert returned no row');
    return { key, row };
  }

  async listKeys(projectId: string): Promise<ApiKeyRow[]> {
    const res = await this.pool.query<ApiKeyRow>(
      'SELECT * FROM api_keys WHERE project_id = $1 ORDER BY created_at, id',
      [projectId],
    );
    return res.rows;
  }

  async revokeKey(projectId: string, keyId: string): Promise<ApiKeyRow | undefined> {
    const res = await this.pool.query<ApiKeyRow>(
      'UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 AND project_id = $2 RETURNING *',
      [keyId, projectId],
    );
    return res.rows[0];
  }

  async findKeyByPrefix(prefix: string): Promise<ApiKeyRow | undefined> {
    const res = await this.pool.query<ApiKeyRow>('SELECT * FROM api_keys WHERE prefix = $1', [prefix]);
    return res.rows[0];
  }

  async clientLimits(clientId: string): Promise<ClientLimits> {
    const res = await this.pool.query<ClientLimits>(
      'SELECT banks, spaces, expires_at FROM oauth_clients WHERE client_id = $1',
      [clientId],
    );
    return res.rows[0] ?? { banks: null, spaces: null, expires_at: null };
  }

  /** Writes batched last-use times (one statement for many keys; never goes backwards). */
  async touchKeys(lastUsed: Map<string, Date>): Promise<void> {
    if (lastUsed.size === 0) return;
    const ids = [...lastUsed.keys()];
    const times = ids.map((id) => (lastUsed.get(id) ?? new Date()).toISOString());
    await this.pool.query(
      `UPDATE api_keys k SET last_used_at = GREATEST(COALESCE(k.last_used_at, '-infinity'), t.ts)
       FROM unnest($1::text[], $2::timestamptz[]) AS t(id, ts) WHERE k.id = t.id`,
      [ids, times],
    );
  }

  // --- quotas ---

  async usage(project: Project, now: Date): Promise<UsageReport> {
    const { period, resetsAt } = periodOf(now);
    const res = await this.pool.query<{ metric: string; used: string }>(
      'SELECT metric, used FROM usage_counters WHERE project_id = $1 AND period = $2',
      [project.id, period],
    );
    const limits = limitsFor(project.plan, project.quotas);
    const used = (m: Metric): number => Number(res.rows.find((r) => r.metric === m)?.used ?? 0);
    const report: UsageReport = {
      period,
      resets_at: resetsAt.toISOString(),
      plan: project.plan,
      memories: { used: 0, limit: 0 },
      recalls: { used: 0, limit: 0 },
      reflects: { used: 0, limit: 0 },
      daily: dailyUsage(await this.dayCounts(project.id, daysSoFar(now)), now),
    };
    for (const m of METRICS) report[m] = { used: used(m), limit: limits[m] };
    return report;
  }

  private async dayCounts(projectId: string, days: { from: string; to: string }): Promise<DayCount[]> {
    const res = await this.pool.query<DayCount>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, metric, used FROM usage_daily
       WHERE project_id = $1 AND day >= $2::date AND day <= $3::date`,
      [projectId, days.from, days.to],
    );
    return res.rows;
  }
}
