// Checks on dynamically registered client metadata (RFC 7591) that oidc-provider does not make: text the control
// plane can store, a grant-type list of the right shape, and no project or client-credentials powers. Each failure is
// an `invalid_client_metadata` answer (400), never a server error.
import { errors as oidcErrors } from 'oidc-provider';
import { isStorableText } from '@mnemos/http-input';

const MAX_CLIENT_NAME = 200;

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

/** Throws `invalid_client_metadata` when registered metadata cannot be accepted. */
export function checkRegisteredMetadata(metadata: Record<string, unknown>): void {
  const invalid = (message: string): never => {
    throw new oidcErrors.InvalidClientMetadata(message);
  };
  const field = findUnstorable(metadata, '');
  if (field !== undefined) invalid(`${field} must not contain NUL characters or unpaired surrogates`);
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
