// Which requests oidc-provider handles as a dynamic client registration (RFC 7591), so the gateway can count them
// before handing them over. Its router also takes the path with one trailing slash, so that spelling counts too.

/** Where clients register (the provider's `registration` route). */
export const REGISTRATION_PATH = '/oauth/register';

/** Whether a request (method and raw URL, query included) registers a new client. */
export function isClientRegistration(method: string, url: string): boolean {
  if (method !== 'POST') return false;
  const path = url.split(/[?#]/, 1)[0] ?? '';
  return path === REGISTRATION_PATH || path === `${REGISTRATION_PATH}/`;
}
