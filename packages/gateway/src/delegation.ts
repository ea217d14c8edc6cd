// What a credential may hand on when it creates an API key or an OAuth client: never more than it holds itself.
// Scopes are a subset of the creator's; banks, spaces and expiry are at most the creator's, and inherited when omitted.
import { problem, type Problem } from '@mnemos/problems';
import type { Scope } from './scopes.js';

/** Scopes of a new key when none are asked for: memory work and MCP, never project management. */
export const DEFAULT_KEY_SCOPES: readonly Scope[] = [
  'memory:retain',
  'memory:recall',
  'memory:reflect',
  'memory:delete',
  'mcp',
];

/** The limits of the credential that creates another one (the admin token has none and is passed as null). */
export interface Delegator {
  scopes: ReadonlySet<string>;
  banks: ReadonlySet<string> | null;
  spaces: ReadonlySet<string> | null;
  expiresAt: Date | null;
}

export interface RequestedLimits {
  scopes?: Scope[] | undefined;
  banks?: string[] | undefined;
  spaces?: string[] | undefined;
  expires_at?: string | undefined;
}

export interface DelegatedLimits {
  scopes: Scope[];
  banks: string[] | null;
  spaces: string[] | null;
  expires_at: string | null;
}

const SHOWN = 5;

function named(values: readonly string[]): string {
  const shown = values
    .slice(0, SHOWN)
    .map((v) => `"${v}"`)
    .join(', ');
  return values.length > SHOWN ? `${shown} and ${values.length - SHOWN} more` : shown;
}

/** A list limit (banks or spaces): inherited when omitted, else it must lie within the creator's. */
function narrowed(
  kind: 'banks' | 'spaces',
  requested: string[] | undefined,
  held: ReadonlySet<string> | null,
): string[] | null {
  if (requested === undefined) return held === null ? null : [...held];
  if (held === null) return requested;
  const wider = requested.filter((v) => !held.has(v));
  if (wider.length > 0) {
    throw problem(
      'forbidden',
      'grantWider',
      { kind, wider: named(wider) },
      { errors: [{ pointer: `/${kind}`, detail: `must lie within the creating credential's ${kind}` }] },
    );
  }
  return requested;
}

function expiry(requested: string | undefined, held: Date | null, now: number): string | null {
  if (requested !== undefined && Date.parse(requested) <= now) {
    throw problem('validation_failed', 'expiryInPast', {
      errors: [{ pointer: '/expires_at', detail: 'must be in the future' }],
    });
  }
  if (held === null) return requested ?? null;
  if (requested === undefined) return held.toISOString();
  if (Date.parse(requested) > held.getTime()) {
    throw problem(
      'forbidden',
      'expiryBeyondHeld',
      { heldUntil: held.toISOString() },
      { errors: [{ pointer: '/expires_at', detail: "must not be later than the creating credential's expiry" }] },
    );
  }
  return requested;
}

function scopesOf(
  requested: Scope[] | undefined,
  held: ReadonlySet<string> | null,
  defaults: readonly Scope[],
): Scope[] {
  const scopes = requested ?? (held === null ? [...defaults] : defaults.filter((s) => held.has(s)));
  if (held !== null) {
    const extra = scopes.filter((s) => !held.has(s));
    if (extra.length > 0) {
      throw problem('insufficient_scope', 'grantUnheld', { missing: extra });
    }
  }
  if (scopes.length === 0) {
    throw problem(
      'validation_failed',
      'noDefaultScopes',
      { defaults },
      { errors: [{ pointer: '/scopes', detail: 'is required for this credential' }] },
    );
  }
  return scopes;
}

/** Resolves the limits of a new credential created by `creator` (null: the admin token), or throws a 4xx problem. */
export function delegate(
  creator: Delegator | null,
  requested: RequestedLimits,
  defaults: readonly Scope[] = DEFAULT_KEY_SCOPES,
  now: number = Date.now(),
): DelegatedLimits {
  return {
    scopes: scopesOf(requested.scopes, creator?.scopes ?? null, defaults),
    banks: narrowed('banks', requested.banks, creator?.banks ?? null),
    spaces: narrowed('spaces', requested.spaces, creator?.spaces ?? null),
    expires_at: expiry(requested.expires_at, creator?.expiresAt ?? null, now),
  };
}

/** The limits an existing key or OAuth client grants, compared with the credential that manages it. */
export interface GrantedLimits {
  scopes: readonly string[];
  banks: readonly string[] | null;
  spaces: readonly string[] | null;
  expires_at: Date | string | null;
}

/** A list limit lies within another when the other is unlimited, or it is limited to a subset of it. */
function listWithin(granted: readonly string[] | null, held: ReadonlySet<string> | null): boolean {
  return held === null || (granted !== null && granted.every((v) => held.has(v)));
}

/**
 * Whether `manager` (null: the admin token) holds at least everything `granted` gives: a credential may list and remove
 * only the keys and clients it could have created itself, so a limited key cannot see or revoke a wider one.
 */
export function withinReach(manager: Delegator | null, granted: GrantedLimits): boolean {
  if (manager === null) return true;
  const expires = granted.expires_at === null ? null : new Date(granted.expires_at).getTime();
  return (
    granted.scopes.every((s) => manager.scopes.has(s)) &&
    listWithin(granted.banks, manager.banks) &&
    listWithin(granted.spaces, manager.spaces) &&
    (manager.expiresAt === null || (expires !== null && expires <= manager.expiresAt.getTime()))
  );
}

/** The 403 for a credential managing a key or client wider than itself. */
export function beyondReach(what: 'API key' | 'OAuth client', id: string): Problem {
  return problem('forbidden', 'beyondReach', { what, id });
}
