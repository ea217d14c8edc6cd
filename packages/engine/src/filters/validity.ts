/**
 * Which memories a read answers by their validity interval [valid_from, valid_to): the current ones (valid_to unset or
 * still ahead), the ones valid at an instant (`as_of`), or all of them (`include_superseded`). Whatever the choice, a
 * memory whose `expires_at` has come is answered by no read: expiry forgets, where validity only dates. Recall's three
 * tiers and the memory list apply the same rule, in memory (`validityTest`) or in SQL (`validitySql`,
 * memory/validity-sql.ts), at one instant per read (`now`, from the engine's clock).
 */
export type Validity = ({ kind: 'current' } | { kind: 'asOf'; at: Date } | { kind: 'all' }) & { now: Date };

/** A read's validity choice; `includeSuperseded` wins over `asOf` (it asks for every memory). */
export interface ValidityChoice {
  asOf?: Date | undefined;
  includeSuperseded?: boolean | undefined;
  /** The instant the read is made at (the engine's clock); the system clock's now when absent. */
  now?: Date | undefined;
}

export function validityOf(choice: ValidityChoice): Validity {
  const now = choice.now ?? new Date();
  if (choice.includeSuperseded === true) return { kind: 'all', now };
  if (choice.asOf !== undefined) return { kind: 'asOf', at: choice.asOf, now };
  return { kind: 'current', now };
}

/** Whether a memory that expires at `expiresAt` (epoch milliseconds; null: never) is already forgotten at `now`. */
export const expiredAt = (expiresAt: number | null, now: number): boolean => expiresAt !== null && expiresAt <= now;

/**
 * Whether a memory valid from `from` to `to` (epoch milliseconds; null: still valid) and expiring at `expires` (null:
 * never) passes.
 */
export function validityTest(v: Validity): (from: number, to: number | null, expires: number | null) => boolean {
  const now = v.now.getTime();
  switch (v.kind) {
    case 'all':
      return (_from, _to, expires) => !expiredAt(expires, now);
    case 'current': {
      // "Current" by the system clock, as the database judges it (memory/validity-sql.ts); expiry by the read's instant.
      const current = Date.now();
      return (_from, to, expires) => (to === null || to > current) && !expiredAt(expires, now);
    }
    case 'asOf': {
      const at = v.at.getTime();
      return (from, to, expires) => from <= at && (to === null || to > at) && !expiredAt(expires, now);
    }
  }
}
