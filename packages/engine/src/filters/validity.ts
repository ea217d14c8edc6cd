/**
 * Which memories a read answers by their validity interval [valid_from, valid_to): the current ones (valid_to unset or
 * still ahead), the ones valid at an instant (`as_of`), or all of them (`include_superseded`). Recall's three tiers and
 * the memory list apply the same rule, in memory (`validityTest`) or in SQL (`validitySql`, memory/validity-sql.ts).
 */
export type Validity = { kind: 'current' } | { kind: 'asOf'; at: Date } | { kind: 'all' };

/** A read's validity choice; `includeSuperseded` wins over `asOf` (it asks for every memory). */
export interface ValidityChoice {
  asOf?: Date | undefined;
  includeSuperseded?: boolean | undefined;
}

export function validityOf(choice: ValidityChoice): Validity {
  if (choice.includeSuperseded === true) return { kind: 'all' };
  if (choice.asOf !== undefined) return { kind: 'asOf', at: choice.asOf };
  return { kind: 'current' };
}

/**
 * Whether a memory valid from `from` to `to` (epoch milliseconds; null: still valid) passes. "Current" is judged at
 * the time the test is made, so one recall judges every memory at one instant.
 */
export function validityTest(v: Validity): (from: number, to: number | null) => boolean {
  switch (v.kind) {
    case 'all':
      return () => true;
    case 'current': {
      const now = Date.now();
      return (_from, to) => to === null || to > now;
    }
    case 'asOf': {
      const at = v.at.getTime();
      return (from, to) => from <= at && (to === null || to > at);
    }
  }
}
