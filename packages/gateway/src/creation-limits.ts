// The pace at which anonymous callers may create accounts (console sign-up) and OAuth clients (dynamic registration):
// each creation is counted against the client's address and against everyone together, in fixed windows of the
// gateway's rate limiter. The address limit slows one source; the total caps what many sources can create at once.
import { normalizeIP } from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';
import { problem } from '@mnemos/problems';
import type { RateLimits } from './ratelimit.js';

export interface CreationLimits {
  /** Creations allowed from one client address per window. */
  perAddress: number;
  /** Creations allowed from all addresses together per window. */
  total: number;
  windowMs: number;
}

/** What is being created; it names the counters and the refusal. */
export type Creation = 'signUps' | 'clientRegistrations';

/** "hour", "15 minutes", "90 s": the window as the refusal names it. */
function windowName(windowMs: number): string {
  const seconds = Math.round(windowMs / 1000);
  const unit = (n: number, one: string): string => (n === 1 ? one : `${n} ${one}s`);
  if (seconds % 3600 === 0) return unit(seconds / 3600, 'hour');
  if (seconds % 60 === 0) return unit(seconds / 60, 'minute');
  return `${seconds} s`;
}

/**
 * Counts one creation from the request's address (an IPv6 address by its /64, which one host usually holds whole);
 * throws 429 `rate_limited` with Retry-After when the address or everyone together has used the window's allowance.
 * The address is counted first, so a refused address spends none of the total.
 */
export async function admitCreation(
  limiter: RateLimits,
  request: FastifyRequest,
  creation: Creation,
  limits: CreationLimits,
): Promise<void> {
  const address = normalizeIP(request.ip);
  const refuse = (wait: number, scope: 'FromAddress' | 'Total', limit: number): never => {
    throw problem(
      'rate_limited',
      `${creation}${scope}`,
      { limit, window: windowName(limits.windowMs), wait },
      { headers: { 'retry-after': String(wait) }, extra: { retry_after: wait } },
    );
  };
  const addressWait = await limiter.take(request, `${creation}:${address}`, limits.perAddress, limits.windowMs);
  if (addressWait > 0) refuse(addressWait, 'FromAddress', limits.perAddress);
  const totalWait = await limiter.take(request, `${creation}:*`, limits.total, limits.windowMs);
  if (totalWait > 0) refuse(totalWait, 'Total', limits.total);
}
