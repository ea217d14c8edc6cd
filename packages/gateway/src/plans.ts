// Plans: each project's monthly quotas (memories stored, recalls, reflects) and per-key request rate, which a project
// may override; and the calendar month the quotas are counted in.
export type Metric = 'memories' | 'recalls' | 'reflects';
export const METRICS: readonly Metric[] = ['memories', 'recalls', 'reflects'];

export interface Limits {
  memories: number;
  recalls: number;
  reflects: number;
  /** Per-key request rate: requests admitted per one-minute window. */
  requests_per_minute: number;
}

/** Per-project overrides of a plan's limits in an update: null removes an override. */
export type QuotaOverrides = { [K in keyof Limits]?: number | null };

export const PLANS: Record<string, Limits> = {
  free: { memories: 1_000, recalls: 5_000, reflects: 100, requests_per_minute: 600 },
  pro: { memories: 100_000, recalls: 500_000, reflects: 10_000, requests_per_minute: 6_000 },
  scale: { memories: 1_000_000, recalls: 5_000_000, reflects: 100_000, requests_per_minute: 60_000 },
};

export function limitsFor(plan: string, overrides: Partial<Limits>): Limits {
  const base = PLANS[plan] ?? PLANS['free'] ?? { memories: 0, recalls: 0, reflects: 0, requests_per_minute: 0 };
  return { ...base, ...overrides };
}

/** The calendar month (UTC) a time falls in, as `YYYY-MM`, and when it ends. */
export function periodOf(now: Date): { period: string; resetsAt: Date } {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  return { period: `${y}-${String(m + 1).padStart(2, '0')}`, resetsAt: new Date(Date.UTC(y, m + 1, 1)) };
}
