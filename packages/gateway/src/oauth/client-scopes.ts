// Which of the seven scopes an OAuth client may ever obtain, and the checks on what a token request asks for.
import { errors as oidcErrors } from 'oidc-provider';
import { isScope, type Scope } from '../scopes.js';

/** What an MCP client needs to work with memory: the scopes the MCP endpoint's 401 asks for. */
export const MCP_CLIENT_SCOPES: readonly Scope[] = [
  'mcp',
  'memory:retain',
  'memory:recall',
  'memory:reflect',
  'memory:delete',
];

/**
 * Scopes of a dynamically registered client that names no `scope`: the MCP scopes. The project scopes (keys, OAuth
 * clients, usage) must be registered explicitly, and every scope still needs the consent of the signed-in account.
 */
export const DYNAMIC_CLIENT_DEFAULT_SCOPES: readonly Scope[] = MCP_CLIENT_SCOPES;

const words = (text: string): string[] => text.split(' ').filter((s) => s.length > 0);

/**
 * Project clients carry `allowed_scopes` (set by the gateway); registered clients carry the RFC 7591 `scope` they
 * registered, or the defaults above.
 */
export function clientScopes(metadata: Record<string, unknown>): Scope[] {
  const allowed = metadata['allowed_scopes'] ?? metadata['scope'];
  if (typeof allowed !== 'string') return [...DYNAMIC_CLIENT_DEFAULT_SCOPES];
  return words(allowed).filter(isScope);
}

/**
 * A client-credentials request must name its scopes, all of them the client's: a token with no scope is useless, and
 * a silently narrowed one hides the mistake (RFC 6749 section 5.2, `invalid_scope`).
 */
export function checkClientCredentialsScope(requested: unknown, allowed: readonly Scope[]): void {
  const asked = typeof requested === 'string' ? words(requested) : [];
  if (asked.length === 0) {
    const example = allowed[0] ?? 'memory:recall';
    throw new oidcErrors.InvalidScope(`name the scopes you need in scope=, for example scope=${example}`, '');
  }
  const outside = asked.filter((s) => !(allowed as readonly string[]).includes(s));
  if (outside.length > 0) {
    const names = outside.join(' ');
    throw new oidcErrors.InvalidScope(`this client may not request ${names}; it holds ${allowed.join(' ')}`, names);
  }
}
