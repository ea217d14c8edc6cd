// Failed sign-ins on the authorization pages, counted per account (the email typed, known or not, so the answer does
// not reveal which accounts exist) and per client address, in fixed windows. Counts live in each gateway's memory,
// like the request rate limits: behind N gateways an attacker gets at most N times the allowance.

export interface SignInLimits {
  /** Failed sign-ins allowed per account per window. */
  perAccount: number;
  /** Failed sign-ins allowed per client address per window (covers guessing across many accounts). */
  perAddress: number;
  windowMs: number;
}

interface Window {
  failures: number;
  endsAt: number;
}

const MAX_TRACKED = 100_000;

export class SignInThrottle {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly limits: SignInLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds until this account and address may try again; 0 when they may now. */
  waitMs(email: string, address: string): number {
    const t = this.now();
    const blocked = (key: string, limit: number): number => {
      const w = this.windows.get(key);
      return w !== undefined && w.endsAt > t && w.failures >= limit ? w.endsAt - t : 0;
    };
    const account = blocked(accountKey(email), this.limits.perAccount);
    return Math.max(account, blocked(addressKey(address), this.limits.perAddress));
  }

  recordFailure(email: string, address: string): void {
    const t = this.now();
    if (this.windows.size >= MAX_TRACKED) this.prune(t);
    for (const key of [accountKey(email), addressKey(address)]) {
      const w = this.windows.get(key);
      if (w === undefined || w.endsAt <= t) this.windows.set(key, { failures: 1, endsAt: t + this.limits.windowMs });
      else w.failures += 1;
    }
  }

  /** A correct password clears the account's count; the address keeps its count. */
  recordSuccess(email: string): void {
    this.windows.delete(accountKey(email));
  }

  private prune(t: number): void {
    for (const [key, w] of this.windows) if (w.endsAt <= t) this.windows.delete(key);
    // Still full of live windows: forget the oldest rather than grow without bound.
    for (const key of this.windows.keys()) {
      if (this.windows.size < MAX_TRACKED) break;
      this.windows.delete(key);
    }
  }
}

const accountKey = (email: string): string => `account:${email.trim().toLowerCase()}`;
const addressKey = (address: string): string => `address:${address}`;
