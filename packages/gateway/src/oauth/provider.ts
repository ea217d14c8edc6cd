// OAuth 2.0 authorization server: oidc-provider (certified, maintained) configured for Mnemos. Authorization code
// with PKCE (S256 only), client credentials, refresh tokens, revocation, introspection, RFC 8414 / OIDC discovery,
// dynamic client registration (for MCP clients) and resource indicators (the gateway is the one resource server).
// Access tokens are opaque, stored in the control plane, and carry the project (extra claim `project_id`) and scopes.
import type { IncomingMessage, ServerResponse } from 'node:http';
import Provider, { errors as oidcErrors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { ResolvedToken } from '../auth.js';
import type { Pool } from '../db.js';
import type { GatewaySecrets } from '../secrets.js';
import { SCOPES } from '../scopes.js';
import { PgAdapter } from './adapter.js';
import { checkClientCredentialsScope, clientScopes } from './client-scopes.js';
import { toPublicUrls } from './public-urls.js';
import { checkRegisteredMetadata } from './registration.js';
import { REGISTRATION_PATH } from './registration-requests.js';

export interface ProviderOptions {
  pool: Pool;
  issuer: string;
  consoleUrl: string;
  corsOrigins: string[];
  secrets: GatewaySecrets;
  trustProxy: boolean;
  evict: (event: string) => void;
}

export const ACCESS_TOKEN_TTL = 3600;
export const REFRESH_TOKEN_TTL = 30 * 24 * 3600;

/** Subject of an authorization-code grant: the signed-in account and the project it chose, `acc_x:prj_y`. */
export function subjectOf(accountId: string, projectId: string): string {
  return `${accountId}:${projectId}`;
}

function projectOfSubject(sub: string | undefined): string | undefined {
  const i = sub?.indexOf(':') ?? -1;
  return sub === undefined || i < 0 ? undefined : sub.slice(i + 1);
}

/** The console page of an interaction: a path when the gateway serves the console itself, else an absolute URL. */
export function consoleInteractionUrl(consoleUrl: string, issuer: string, uid: string): string {
  return `${consoleUrl === issuer ? '' : consoleUrl}/console/oauth/${uid}`;
}

export interface OAuthServer {
  provider: Provider;
  handle: (req: IncomingMessage, res: ServerResponse) => void;
  resolveToken: (token: string) => Promise<ResolvedToken | undefined>;
}

export function createOAuthServer(opts: ProviderOptions): OAuthServer {
  const { issuer } = opts;
  const resources = new Set([issuer, `${issuer}/`, `${issuer}/mcp`]);
  const configuration: Configuration = {
    adapter: (name: string) =>
      new PgAdapter(opts.pool, name, { evict: opts.evict, clientSecretKey: opts.secrets.clientSecretKey }),
    jwks: opts.secrets.jwks,
    cookies: { keys: opts.secrets.cookieKeys },
    routes: {
      authorization: '/oauth/authorize',
      token: '/oauth/token',
      revocation: '/oauth/revoke',
      introspection: '/oauth/introspect',
      registration: REGISTRATION_PATH,
      jwks: '/oauth/jwks',
      userinfo: '/oauth/userinfo',
      end_session: '/oauth/logout',
      pushed_authorization_request: '/oauth/par',
      code_verification: '/oauth/device',
      device_authorization: '/oauth/device/auth',
      backchannel_authentication: '/oauth/backchannel',
      challenge: '/oauth/challenge',
    },
    // The seven scopes are listed here too so that dynamic registration accepts them in `scope` (RFC 7591) and
    // oidc-provider refuses authorization requests for scopes a registered client did not register.
    scopes: ['openid', 'offline_access', ...SCOPES],
    claims: { openid: ['sub'] },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    extraClientMetadata: {
      // project_id: the project a client belongs to; allowed_scopes: the scopes it may ever obtain. Only the gateway
      // sets them (project clients); registration cannot.
      properties: ['project_id', 'allowed_scopes'],
      // Called once per property before oidc-provider's own checks; the whole metadata is checked once, with the
      // first property. Dynamically registered clients belong to no project until a signed-in account authorizes
      // them, so they can neither name a project nor use the client-credentials grant.
      validator(ctx, key, _value, metadata) {
        if (ctx === undefined || key !== 'project_id') return;
        // Clients loaded from storage are checked without a request, so the request context may lack `oidc`.
        const route = (ctx as Partial<KoaContextWithOIDC>).oidc?.route;
        if (route === 'registration' || route === 'client_update') checkRegisteredMetadata(metadata);
      },
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      // A token is introspected only by the client it was issued to; the gateway, the one resource server, reads
      // tokens from its own store and never needs the endpoint. Anyone else learns only `active: false`.
      introspection: { enabled: true, allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId },
      // Only the client a token was issued to may revoke it.
      revocation: { enabled: true, allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId },
      registration: { enabled: true, initialAccessToken: false, issueRegistrationAccessToken: true },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => issuer,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resourceIndicator, client) => {
          if (!resources.has(resourceIndicator)) throw new oidcErrors.InvalidTarget();
          const allowed = clientScopes(client.metadata());
          const params = ctx.oidc.params;
          if (ctx.oidc.route === 'token' && params?.['grant_type'] === 'client_credentials') {
            checkClientCredentialsScope(params['scope'], allowed);
          }
          return {
            scope: allowed.join(' '),
            audience: issuer,
            accessTokenFormat: 'opaque',
            accessTokenTTL: ACCESS_TOKEN_TTL,
          };
        },
      },
    },
    pkce: { required: () => true },
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL,
      ClientCredentials: ACCESS_TOKEN_TTL,
      AuthorizationCode: 60,
      RefreshToken: REFRESH_TOKEN_TTL,
      Interaction: 3600,
      Session: 14 * 24 * 3600,
      Grant: REFRESH_TOKEN_TTL,
      IdToken: 3600,
    },
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    expiresWithSession: () => false,
    rotateRefreshToken: true,
    extraTokenClaims: (ctx, token) => {
      if (token.kind === 'ClientCredentials') {
        const project = ctx.oidc.client?.metadata()['project_id'];
        return typeof project === 'string' ? { project_id: project } : undefined;
      }
      const project = projectOfSubject('accountId' in token ? token.accountId : undefined);
      return project === undefined ? undefined : { project_id: project };
    },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    // Sign-in and consent are console pages (they read and answer the interaction through /v1/account/oauth/...).
    interactions: { url: (_ctx, interaction) => consoleInteractionUrl(opts.consoleUrl, issuer, interaction.uid) },
    clientBasedCORS: (_ctx, origin, client) => {
      if (opts.corsOrigins.includes(origin)) return true;
      return (client.redirectUris ?? []).some((u) => {
        try {
          return new URL(u).origin === origin;
        } catch {
          return false;
        }
      });
    },
    renderError: (ctx, out) => {
      ctx.type = 'html';
      const esc = (s: unknown): string => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
      ctx.body =
        `<!doctype html><html><head><meta charset="utf-8"><title>Authorization error</title></head><body>` +
        `<h1>Authorization error</h1><p><code>${esc(out.error)}</code></p><p>${esc(out.error_description ?? '')}</p></body></html>`;
    },
  };

  const provider = new Provider(issuer, configuration);
  provider.proxy = opts.trustProxy;

  // RFC 8414 metadata at its own well-known path, the console's authorization endpoint, and our scopes; metadata and
  // registration answers name the public address only.
  provider.use(async (ctx, next) => {
    if (ctx.path === '/.well-known/oauth-authorization-server') ctx.path = '/.well-known/openid-configuration';
    await next();
    const route: unknown = (ctx as Partial<KoaContextWithOIDC>).oidc?.route;
    if (ctx.body === null || typeof ctx.body !== 'object' || Buffer.isBuffer(ctx.body)) return;
    const body = ctx.body as Record<string, unknown>;
    if (route === 'discovery' || route === 'registration' || route === 'client' || route === 'client_update') {
      toPublicUrls(body, new URL(ctx.href).origin, issuer);
    }
    if (route === 'discovery') {
      body['authorization_endpoint'] = `${opts.consoleUrl}/oauth/authorize`;
      body['scopes_supported'] = [...SCOPES, 'offline_access'];
      body['grant_types_supported'] = ['authorization_code', 'client_credentials', 'refresh_token'];
    }
  });

  const callback = provider.callback();

  async function resolveToken(value: string): Promise<ResolvedToken | undefined> {
    const token = (await provider.AccessToken.find(value)) ?? (await provider.ClientCredentials.find(value));
    if (token === undefined || token.isExpired) return undefined;
    const project = token.extra?.['project_id'];
    const aud = token.aud;
    if (typeof project !== 'string' || (aud !== undefined && aud !== issuer)) return undefined;
    return {
      jti: token.jti,
      clientId: token.clientId ?? '',
      grantId: 'grantId' in token ? token.grantId : undefined,
      projectId: project,
      scopes: (token.scope ?? '').split(' ').filter((s) => s.length > 0),
      exp: token.exp ?? 0,
    };
  }

  return {
    provider,
    handle: (req, res) => {
      void callback(req, res);
    },
    resolveToken,
  };
}
