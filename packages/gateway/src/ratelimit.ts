// Request rates per credential, the admin API's wrong-token throttle and the pace of sign-ups and client
// registrations, counted by @fastify/rate-limit in fixed windows (one minute unless a caller asks for another length).
// Counts live in each gateway's memory (the library's local store), so with N gateways behind a balancer a key can
// reach at most N times its allowance; monthly quotas, by contrast, are exact and global (in Postgres).
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** The window a per-minute allowance is counted in. */
export const WINDOW_MS = 60_000;
/** Keys tracked at once; past this the least recently used key starts a fresh window. */
const MAX_TRACKED_KEYS = 200_000;

export interface RateLimits {
  /**
   * Counts one request against `key`, which may make `allowance` requests per window of `windowMs` (a key always
   * uses the same window); 0 if admitted, else the seconds until its window has room again.
   */
  take(request: FastifyRequest, key: string, allowance: number, windowMs?: number): Promise<number>;
  /** Like take, but only looks: 0 if a request would be admitted now (nothing is counted), else the seconds to wait. */
  wait(request: FastifyRequest, key: string, allowance: number, windowMs?: number): Promise<number>;
}

/** The key and allowance a request is counted against, known only once the caller is authenticated. */
export interface RateAllowance {
  key: string;
  max: number;
  windowMs: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** What the rate limiter counts this request against (set before each check). */
    rateAllowance: RateAllowance | null;
  }
}

/** Registers the rate-limit plugin (on no route by itself) and returns the limits the request pipeline applies. */
export async function installRateLimits(app: FastifyInstance): Promise<RateLimits> {
  await app.register(rateLimit, { global: false, cache: MAX_TRACKED_KEYS });
  // The key and the allowance are known only once the caller is authenticated, so each call states them here.
  app.decorateRequest('rateAllowance', null);
  const allowanceOf = (request: FastifyRequest): RateAllowance => {
    if (request.rateAllowance === null) throw new Error('rate limit asked without an allowance');
    return request.rateAllowance;
  };
  const limiter = app.createRateLimit({
    timeWindow: (request) => allowanceOf(request).windowMs,
    keyGenerator: (request) => allowanceOf(request).key,
    max: (request) => allowanceOf(request).max,
  });
  const check = async (request: FastifyRequest, allowance: RateAllowance, increment: boolean) => {
    if (allowance.max <= 0) return Math.ceil(allowance.windowMs / 1000);
    request.rateAllowance = allowance;
    const state = await limiter(request, { increment });
    if (state.isAllowed) return 0;
    const full = increment ? state.isExceeded : state.remaining === 0;
    return full ? Math.max(1, state.ttlInSeconds) : 0;
  };
  return {
    take: (request, key, max, windowMs = WINDOW_MS) => check(request, { key, max, windowMs }, true),
    wait: (request, key, max, windowMs = WINDOW_MS) => check(request, { key, max, windowMs }, false),
  };
}
