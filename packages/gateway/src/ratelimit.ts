// Per-credential rate limits: a token bucket per key (or OAuth client), refilled continuously over a minute.
// Buckets live in each gateway's memory (a request is admitted by the gateway that serves it), so with N gateways
// behind a balancer a credential can reach at most N times its rate; monthly quotas, by contrast, are exact and
// global (in Postgres).

interface Bucket {
  tokens: number;
  at: number;
  capacity: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  /** Takes one token; returns 0 if admitted, else the seconds to wait before a token is available. */
  take(key: string, perMinute: number, now: number = Date.now()): number {
    if (perMinute <= 0) return 60;
    const b = this.refilled(key, perMinute, now);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return secondsToNextToken(b, perMinute);
  }

  /** Like take, but only looks: 0 if a token is available now (it stays there), else the seconds to wait. */
  wait(key: string, perMinute: number, now: number = Date.now()): number {
    if (perMinute <= 0) return 60;
    const b = this.buckets.get(key);
    if (b === undefined) return 0;
    const refilled = this.refilled(key, perMinute, now);
    return refilled.tokens >= 1 ? 0 : secondsToNextToken(refilled, perMinute);
  }

  private refilled(key: string, perMinute: number, now: number): Bucket {
    let b = this.buckets.get(key);
    if (b === undefined || b.capacity !== perMinute) {
      b = { tokens: perMinute, at: now, capacity: perMinute };
      this.buckets.set(key, b);
      if (this.buckets.size > 200_000) this.prune(now);
    }
    b.tokens = Math.min(b.capacity, b.tokens + (now - b.at) * (perMinute / 60_000));
    b.at = now;
    return b;
  }

  private prune(now: number): void {
    for (const [k, b] of this.buckets) {
      if (b.tokens + (now - b.at) * (b.capacity / 60_000) >= b.capacity) this.buckets.delete(k);
    }
  }
}

function secondsToNextToken(b: Bucket, perMinute: number): number {
  return Math.max(1, Math.ceil((1 - b.tokens) / (perMinute / 60_000) / 1000));
}
