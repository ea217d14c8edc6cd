// The request pipeline of every memory operation: authenticate, check scope (and bank/space limits), rate-limit,
// reserve quota (from this gateway's lease, quota.ts), forward to the project's engine tenant, count only on success, stream the answer back.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { requireScope, type Principal } from './auth.js';
import type { GatewayContext } from './context.js';
import {
  EngineProblem,
  Engines,
  MAX_NEW_MEMORIES_HEADER,
  WOULD_STORE_HEADER,
  type EngineResponse,
  type ForwardRequest,
} from './engine.js';
import { problem, Problem } from '@mnemos/problems';
import { isEventStream, watchDelivery, watchStreamedAnswer } from './event-stream.js';
import { sendProblem } from './problem.js';
import type { Reservation } from './quota.js';
import { limitsFor, periodOf, type Limits, type Metric } from './plans.js';
import type { Scope } from './scopes.js';

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
  /** Several quota charges at once (an MCP batch); otherwise metric and amount. */
  charges?: Charge[] | undefined;
  /** Post-processing of a successful answer (restricted credentials); default: stream as is. */
  transform?: ((res: EngineResponse) => Promise<EngineResponse>) | undefined;
}

/**
 * The caller of a request: its Bearer credential, or (when `session` allows and no Authorization header is sent) the
 * console session cookie with X-Mnemos-Project.
 */
export async function authenticate(
  ctx: GatewayContext,
  request: FastifyRequest,
  scope: Scope | Scope[],
  options: { session?: boolean } = {},
): Promise<Principal> {
  const bySession =
    (options.session ?? true) && request.headers.authorization === undefined && ctx.console.hasCookie(request);
  const principal = bySession
    ? await ctx.console.principal(request)
    : await ctx.auth.authenticate(request.headers.authorization);
  for (const s of Array.isArray(scope) ? scope : [scope]) requireScope(principal, s);
  const limits = limitsFor(principal.project.plan, principal.project.quotas);
  const perMinute = Math.min(principal.rateLimitPerMinute ?? Infinity, limits.requests_per_minute);
  const wait = await ctx.limiter.take(request, principal.rateKey, perMinute);
  if (wait > 0) {
    throw problem(
      'rate_limited',
      'credential',
      { perMinute, wait },
      { headers: { 'retry-after': String(wait) }, extra: { limit: perMinute, retry_after: wait } },
    );
  }
  return principal;
}

export interface Charge {
  metric: Metric;
  /** Units reserved before forwarding. */
  amount: number;
  /**
   * Asked once the answer is known (after `transform`): how many of the reserved units that part used (never more
   * than `amount` count); the rest are given back, all of them when the part failed. Without it, all count.
   */
  counted?: (() => number) | undefined;
}
type Reserved = Extract<Reservation, { ok: true }> & Charge;

/**
 * A plan's single `memories` charge (a retain) is an upper bound of the memories it stores: the engine is told to store
 * at most that many new memories, and the gateway counts the number the engine reports it stored.
 */
const settlesToStored = (plan: Plan): boolean => plan.charges === undefined && plan.metric === 'memories';

/** Reserves every charge of a plan, or gives back what it took and throws the problem (429 over quota). */
async function reserveAll(
  ctx: GatewayContext,
  projectId: string,
  charges: Charge[],
  limits: Limits,
  now: Date,
): Promise<Reserved[]> {
  const { period, resetsAt } = periodOf(now);
  const reserved: Reserved[] = [];
  const releaseAll = (): void => {
    for (const r of reserved.splice(0)) r.release();
  };
  for (const { metric, amount, counted } of charges) {
    const limit = limits[metric];
    let r: Reservation;
    try {
      r = await ctx.quotas.reserve(projectId, metric, amount, limit, now);
    } catch {
      releaseAll();
      throw problem('database_unavailable', 'quotaLedger', { headers: { 'retry-after': '5' } });
    }
    if (!r.ok) {
      releaseAll();
      const retryAfter = Math.max(1, Math.ceil((resetsAt.getTime() - now.getTime()) / 1000));
      throw problem(
        'quota_exceeded',
        'used',
        { used: r.used, limit, metric, period, needed: amount, resetsAt: resetsAt.toISOString() },
        {
          headers: { 'retry-after': String(retryAfter), ...quotaHeaders(metric, limit, r.used, resetsAt) },
          extra: { metric, limit, used: r.used, requested: amount, period, resets_at: resetsAt.toISOString() },
        },
      );
    }
    reserved.push({ ...r, metric, amount, counted });
  }
  return reserved;
}

/** The new memories a retain answer says it stored, if it says so. */
function storedCount(answer: unknown): number | undefined {
  if (answer === null || typeof answer !== 'object') return undefined;
  const n = (answer as Record<string, unknown>)['stored_count'];
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : undefined;
}

/** Whether a charge pays for a write (a retain), which the engine may carry out though its caller has gone. */
const isWrite = (metric: Metric): boolean => metric === 'memories';

/**
 * Settles the charges of a successful answer: a write counts at once (the engine carried it out); a read (recall,
 * reflect) counts only once its answer starts reaching the caller (for a streamed reflect: a delta or the done event),
 * and is given back when the caller leaves before, or the answer fails on the way.
 */
function settleOnDelivery(
  res: EngineResponse,
  reserved: Reserved[],
  callerGone: AbortSignal,
): { res: EngineResponse; uncounted: number } {
  const used = reserved.map((r) => Math.min(r.amount, r.counted?.() ?? r.amount));
  reserved.forEach((r, i) => {
    if (isWrite(r.metric)) r.settle(used[i]!);
  });
  const reads = reserved.filter((r) => !isWrite(r.metric));
  const stream = isEventStream(res.headers);
  // Units not counted, for the quota headers; a stream's are not known before it ends.
  const uncounted = stream || reserved[0] === undefined ? 0 : reserved[0].amount - used[0]!;
  if (reads.length === 0) return { res, uncounted };
  const settleReads = (reached: boolean): void => {
    reserved.forEach((r, i) => {
      if (!isWrite(r.metric)) r.settle(reached ? used[i]! : 0);
    });
  };
  const body = stream ? watchStreamedAnswer(res.body, settleReads) : watchDelivery(res.body, settleReads);
  // A caller already gone reads nothing of the answer.
  if (callerGone.aborted) body.destroy();
  return { res: { ...res, body }, uncounted };
}

/**
 * Forwards a plan with its units reserved. A write whose outcome is unknown when it fails (the engine may still carry
 * it out) stays counted; any other failure gives its units back.
 */
async function forwardReserved(
  ctx: GatewayContext,
  reply: FastifyReply,
  engine: string,
  plan: Plan,
  reserved: Reserved[],
): Promise<{ res: EngineResponse; uncounted: number }> {
  const abort = new AbortController();
  // The response closing before it was written means the caller went away. (The request stream closes as soon as its
  // body has been read, which is no sign of that.)
  const onClose = (): void => {
    if (!reply.raw.writableEnded) abort.abort();
  };
  reply.raw.once('close', onClose);
  const bound = settlesToStored(plan) ? reserved[0] : undefined;
  const extraHeaders =
    bound === undefined
      ? plan.forward.extraHeaders
      : { ...plan.forward.extraHeaders, [MAX_NEW_MEMORIES_HEADER]: String(bound.amount) };
  let answered = false;
  try {
    let res = await ctx.engines.forward(engine, { ...plan.forward, extraHeaders, signal: abort.signal });
    if (res.status >= 400) {
      for (const r of reserved) r.release();
      return { res, uncounted: 0 };
    }
    answered = true;
    if (plan.transform !== undefined) res = await plan.transform(res);
    if (bound === undefined) return settleOnDelivery(res, reserved, abort.signal);
    const answer = await Engines.json(res);
    // An async retain is stored later and reports no count: it stays counted at the most its job stores, which the
    // engine names (the pieces its content becomes), else at the bound.
    const mostNew = Number(res.headers[WOULD_STORE_HEADER] ?? NaN);
    const stored = Math.min(bound.amount, storedCount(answer) ?? (Number.isInteger(mostNew) ? mostNew : bound.amount));
    bound.settle(stored);
    return { res: Engines.fromJson(res.status, res.headers, answer), uncounted: bound.amount - stored };
  } catch (err) {
    // A read that failed reached its caller as no answer. A write may have been carried out all the same when the
    // engine accepted it or the outcome is unknown: it stays counted.
    const mayHaveRun = answered || (err instanceof EngineProblem && err.mayHaveRun);
    for (const r of reserved) {
      if (mayHaveRun && isWrite(r.metric)) r.commit();
      else r.release();
    }
    throw err;
  } finally {
    reply.raw.off('close', onClose);
  }
}

export async function execute(
  ctx: GatewayContext,
  request: FastifyRequest,
  reply: FastifyReply,
  principal: Principal,
  plan: Plan,
): Promise<FastifyReply> {
  const project = principal.project;
  const now = new Date();
  const { resetsAt } = periodOf(now);
  const charges =
    plan.charges ?? (plan.metric === undefined ? [] : [{ metric: plan.metric, amount: plan.amount ?? 1 }]);
  const limits = limitsFor(project.plan, project.quotas);
  let reserved = await reserveAll(ctx, project.id, charges, limits, now);
  // Time the gateway spent before forwarding (auth, scope, rate limit, quota), for operators and the benchmark.
  const started = request.arrivedAt;
  if (started !== null) reply.header('server-timing', `gateway;dur=${(performance.now() - started).toFixed(2)}`);
  let { res, uncounted } = await forwardReserved(ctx, reply, project.engine, plan, reserved);
  const wouldStore = Number(res.headers[WOULD_STORE_HEADER] ?? NaN);
  const first = charges[0];
  if (settlesToStored(plan) && first !== undefined && res.status === 413 && wouldStore > first.amount) {
    // The estimate was short of what the content becomes after chunking: reserve what the engine counted, once.
    res.body.resume();
    reserved = await reserveAll(ctx, project.id, [{ metric: first.metric, amount: wouldStore }], limits, now);
    ({ res, uncounted } = await forwardReserved(ctx, reply, project.engine, plan, reserved));
  }
  Reflect.deleteProperty(res.headers, WOULD_STORE_HEADER);
  const counted = reserved[0];
  if (counted !== undefined) {
    reply.headers(quotaHeaders(counted.metric, limits[counted.metric], counted.used - uncounted, resetsAt));
  }
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
      if (err instanceof Problem) return sendProblem(reply, err);
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
      if (err instanceof Problem) return sendProblem(reply, err);
      throw err;
    }
  };
}

export { Engines };
