/**
 * The endpoints the OAuth server (oidc-provider, configured in provider.ts) answers, by method: the routes of its
 * enabled features, the authorization's resume path after the console's sign-in and consent, a registered client's
 * read (RFC 7592 without update or delete), and discovery at both well-known paths. Only these reach it: any other path
 * or method under /oauth gets the gateway's own 404 or 405 problem, where the provider would answer a bare-text 404.
 */
export const OAUTH_ENDPOINTS: ReadonlyArray<{ method: 'GET' | 'POST'; url: string }> = [
  { method: 'GET', url: '/.well-known/openid-configuration' },
  { method: 'GET', url: '/.well-known/oauth-authorization-server' },
  { method: 'GET', url: '/oauth/authorize' },
  { method: 'GET', url: '/oauth/authorize/:uid' },
  { method: 'POST', url: '/oauth/par' },
  { method: 'POST', url: '/oauth/token' },
  { method: 'POST', url: '/oauth/revoke' },
  { method: 'POST', url: '/oauth/introspect' },
  { method: 'POST', url: '/oauth/register' },
  { method: 'GET', url: '/oauth/register/:clientId' },
  { method: 'GET', url: '/oauth/jwks' },
];
