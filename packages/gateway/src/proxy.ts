// The request pipeline of every memory operation: authenticate, check scope (and bank/space limits), rate-limit,
// reserve quota (from this gateway's lease, quota.ts), forward to the project's engine tenant, count only on success, stream the answer back.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { requireScope, type Principal } from './auth.js';
import type { GatewayContext } from './context.js';
import { Engines, type EngineResponse, type ForwardRequest } from './engine.js';
import { HttpProblem, sendProblem } from './problem.js';
import type { Reservation } from './quota.js';
import { limitsFor, periodOf, type Metric, type Scope } from './scopes.js';

/** When each request arrived (set by an onRequest hook in app.ts). */
export const startTimes = new WeakMap<FastifyRequest, number>();

/** Path segment encoding that also encodes dots, so a bank called ".." can never become a dot segment. */
export function seg(value: string): string {
  return encodeURIComponent(value).replace(/\./g, '%2E');
}

export function tenantPath(principal: Principal, rest: string): string {
  return `/v1/${seg(principal.project.tenant)}${rest}`;
}

export interface Plan {
  forward: ForwardRequest;
  metric?: Metric | undefined;
  amount?: number | undefined;
  /**
   * Several quota charges at once (an MCP batch); otherwise metric and amount. `counted`, asked once the answer is
   * known (after `transform`), says whether that part succeeded: a charge whose part failed is given back.
   */
  charges?: Array<{ metric: Metric; amount: number; counted?: () => boolean }> | undefined;
  /** Post-processing of a successful answer (restricted credentials); default: stream as is. */
  transform?: ((res: EngineResponse) => Promise<EngineResponse>) | undefined;
}

export async function authenticate(ctx: GatewayContext, request: FastifyRequest, scope: Scope | Scope[]): Promise<Principal> {
  const principal = await ctx.auth.authenticate(request.headers.authorization);
  for (const s of Array.isArray(scope) ? scope : [scope]) requireScope(principal, s);
  const limits = limitsFor(principal.project.plan, principal.project.quotas);
  const perMinute = Math.min(principal.rateLimitPerMinute ?? Infinity, limits.requests_per_minute);
  const wait = ctx.limiter.take(principal.rateKey, perMinute);
  if (wait > 0) {
    throw new HttpProblem(429, 'rate_limited', `This credential is limited to ${perMinute} requests per minute; retry in ${wait} s.`, {
      headers: { 'retry-after': String(wait) },
      extra: { limit: perMinute, retry_after: wait },
    });
  }
  return principal;
}

export async function execute(ctx: GatewayContext, request: FastifyRequest, reply: FastifyReply, principal: Principal, plan: Plan): Promise<FastifyReply> {
  const project = principal.project;
  const now = new Date();
  const { period, resetsAt } = periodOf(now);
  const charges = plan.charges ?? (plan.metric === undefined ? [] : [{ metric: plan.metric, amount: plan.amount ?? 1 }]);
  const limits = limitsFor(project.plan, project.quotas);
  const reserved: Array<{
    metric: Metric; used: number; commit(): void; release(): void; counted?: (() => boolean) | undefined;
  }> = [];
  const releaseAll = (): void => { for (const r of reserved.splice(0)) r.release(); };
  for (const { metric, amount, counted } of charges) {
    const limit = limits[metric];
    let r: Reservation;
    try {
      r = await ctx.quotas.reserve(project.id, metric, amount, limit, now);
    } catch {
      releaseAll();
      throw new HttpProblem(503, 'database_unavailable', 'The quota ledger is unreachable right now; nothing was counted. Retry after the delay given.', {
        headers: { 'retry-after': '5' },
      });
    }
    if (!r.ok) {
      releaseAll();
      const retryAfter = Math.max(1, Math.ceil((resetsAt.getTime() - now.getTime()) / 1000));
      throw new HttpProblem(429, 'quota_exceeded',
        `The project has used ${r.used} of its ${limit} ${metric} for ${period}` +
        `${amount > 1 ? ` and this request needs ${amount}` : ''}; the quota resets at ${resetsAt.toISOString()}. Upgrade the plan for more.`, {
          headers: { 'retry-after': String(retryAfter), ...quotaHeaders(metric, limit, r.used, resetsAt) },
          extra: { metric, limit, used: r.used, requested: amount, period, resets_at: resetsAt.toISOString() },
        });
    }
    reserved.push({ metric, used: r.used, commit: r.commit, release: r.release, counted });
  }
  // Time the gateway spent before forwarding (auth, scope, rate limit, quota), for operators and the benchmark.
  const started = startTimes.get(request);
  if (started !== undefined) reply.header('server-timing', `gateway;dur=${(performance.now() - started).toFixed(2)}`);
  const abort = new AbortController();
  // The response closing before it was written means the caller went away. (The request stream closes as soon as its
  // body has been read, which is no sign of that.)
  const onClose = (): void => { if (!reply.raw.writableEnded) abort.abort(); };
  reply.raw.once('close', onClose);
  let res: EngineResponse;
  try {
    res = await ctx.engines.forward(project.engine, { ...plan.forward, signal: abort.signal });
    if (res.status >= 400) releaseAll();
    else if (plan.transform !== undefined) res = await plan.transform(res);
  } catch (err) {
    releaseAll();
    throw err;
  } finally {
    reply.raw.off('close', onClose);
  }
  // Counted once the engine answered with success (the units stay leased to this gateway until the next flush).
  for (const r of reserved) {
    if (r.counted?.() === false) r.release();
    else r.commit();
  }
  const first = reserved[0];
  if (first !== undefined) reply.headers(quotaHeaders(first.metric, limits[first.metric], first.used, resetsAt));
  reply.headers(res.headers);
  if (res.status >= 400 && (res.headers['content-type'] ?? '').startsWith('application/json')) {
    // Engine problems are problem+json; keep the media type precise.
    reply.header('content-type', 'application/problem+json');
  }
  return reply.code(res.status).send(res.body);
}

function quotaHeaders(metric: Metric, limit: number, used: number, resetsAt: Date): Record<string, string> {
  return {
    'x-quota-metric': metric,
    'x-quota-limit': String(limit),
    'x-quota-used': String(used),
    'x-quota-remaining': String(Math.max(0, limit - used)),
    'x-quota-reset': resetsAt.toISOString(),
  };
}

/** Wraps a handler so every thrown problem becomes a problem+json answer. */
export function guarded<R extends FastifyRequest>(fn: (request: R, reply: FastifyReply) => Promise<FastifyReply>) {
  return async (request: R, reply: FastifyReply): Promise<FastifyReply> => {
    try {
      return await fn(request, reply);
    } catch (err) {
      if (err instanceof HttpProblem) return sendProblem(reply, err);
      throw err;
    }
  };
}

/** Wraps a hook: on a problem, answers it and stops the request; on success lets it go on. */
export function hookGuard(fn: (request: FastifyRequest, reply: FastifyReply) => Promise<void>) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    try {
      await fn(request, reply);
      return undefined;
    } catch (err) {
      if (err instanceof HttpProblem) return sendProblem(reply, err);
      throw err;
    }
  };
}

export { Engines };
