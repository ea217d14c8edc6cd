// Checks on dynamically registered client metadata (RFC 7591) that oidc-provider does not make: text the control
// plane can store, a grant-type list of the right shape, no project or client-credentials powers, plain http only to
// the client's own machine, and no URL the server would fetch. Each failure is an `invalid_client_metadata` or
// `invalid_redirect_uri` answer (400), never a server error.
import { errors as oidcErrors } from 'oidc-provider';
import { isStorableText } from '@mnemos/http-input';

const MAX_CLIENT_NAME = 200;
/** Hosts a browser reaches on the user's own machine: an authorization code sent there over http stays on it. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
/**
 * Metadata oidc-provider would fetch from the server (a client's key set, a pairwise sector list): a request the
 * caller aims at any address the gateway can reach. Clients here authenticate with a secret or as public clients.
 */
const FETCHED_URLS = {
  jwks_uri: 'this server fetches no client keys',
  sector_identifier_uri: 'this server uses no pairwise subject identifiers',
} as const;
const AUTH_METHODS = 'client_secret_basic, client_secret_post or none';

function findUnstorable(value: unknown, where: string): string | undefined {
  if (typeof value === 'string') return isStorableText(value) ? undefined : where;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = findUnstorable(item, `${where}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [k, item] of Object.entries(value)) {
      const found = findUnstorable(item, where === '' ? k : `${where}.${k}`);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** The first redirect URI that sends the authorization code over plain http to another machine. */
function findRemoteHttp(uris: unknown): string | undefined {
  if (!Array.isArray(uris)) return undefined;
  return uris.find((uri): uri is string => {
    // Malformed URIs are left to oidc-provider, which refuses them with its own message.
    const url = typeof uri === 'string' ? URL.parse(uri) : null;
    return url !== null && url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname);
  });
}

/** Throws `invalid_client_metadata` or `invalid_redirect_uri` when registered metadata cannot be accepted. */
export function checkRegisteredMetadata(metadata: Record<string, unknown>): void {
  const invalid = (message: string): never => {
    throw new oidcErrors.InvalidClientMetadata(message);
  };
  const field = findUnstorable(metadata, '');
  if (field !== undefined) invalid(`${field} must not contain NUL characters or unpaired surrogates`);
  const remote = findRemoteHttp(metadata['redirect_uris']);
  if (remote !== undefined) {
    const refusal = new oidcErrors.InvalidRedirectUri();
    refusal.error_description =
      `redirect_uris: ${remote} uses http, which is allowed only for loopback addresses ` +
      `(${[...LOOPBACK_HOSTS].join(', ')}); use https for any other host`;
    throw refusal;
  }
  for (const [name, reason] of Object.entries(FETCHED_URLS)) {
    if (metadata[name] !== undefined) {
      invalid(`${name} is not supported: ${reason}; register without it and authenticate with ${AUTH_METHODS}`);
    }
  }
  if (metadata['project_id'] !== undefined) {
    invalid('project_id cannot be registered; a signed-in account picks the project');
  }
  if (metadata['allowed_scopes'] !== undefined) invalid('allowed_scopes cannot be registered; use scope');
  const name = metadata['client_name'];
  if (typeof name === 'string' && name.length > MAX_CLIENT_NAME) {
    invalid(`client_name must be at most ${MAX_CLIENT_NAME} characters`);
  }
  const grants = metadata['grant_types'];
  if (grants !== undefined && (!Array.isArray(grants) || !grants.every((g) => typeof g === 'string'))) {
    invalid('grant_types must be an array of strings, for example ["authorization_code", "refresh_token"]');
  }
  if (Array.isArray(grants) && grants.includes('client_credentials')) {
    invalid('dynamically registered clients may not use client_credentials; create a project client instead');
  }
}
