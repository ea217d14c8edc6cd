// What the gateway fuzz needs beyond its OpenAPI document: the OAuth endpoints (discovery, authorization and its
// resume, pushed authorization, token, revocation, introspection, dynamic registration and a registered client's read),
// a console session for the account routes, and the clients, token and interaction those requests name (the session is
// renewed when a request ends it).
import type { FuzzAnswer, Rng, RouteSpec } from '../../engine/test/helpers/fuzz.js';
import { call, obj, type Json } from './helpers.js';
import { basic, Browser, pkce, REDIRECT, signIn, token } from './oauth-browser.js';

/** The credentials and names the OAuth and account requests use; refreshed when a request ends one by design. */
export interface OAuthFixtures {
  base: string;
  /** A project client (client credentials grant) and one of its access tokens. */
  projectClient: { id: string; secret: string; accessToken: string };
  /** A dynamically registered public client the authorization requests name, read with its registration token. */
  publicClient: { id: string; registrationToken: string };
  /** An authorization request's interaction, waiting for its consent. */
  interaction: string;
  challenge: string;
  /** The console account's session: its cookie and CSRF token, and the project it owns. */
  console: { email: string; password: string; cookie: string; csrf: string; project: string };
}

async function register(base: string, metadata: Json): Promise<Json> {
  const created = await call(base, 'POST', '/oauth/register', { body: metadata });
  if (created.status !== 201) throw new Error(`registration: ${created.status} ${created.text}`);
  return obj(created.body);
}

async function consoleSession(
  base: string,
  email: string,
  password: string,
): Promise<{ cookie: string; csrf: string }> {
  const browser = new Browser(base);
  const signedIn = await signIn(browser, email, password);
  if (signedIn.status !== 200) throw new Error(`console sign-in: ${signedIn.status} ${signedIn.text}`);
  return { cookie: `mnemos_session=${browser.cookie('mnemos_session') ?? ''}`, csrf: browser.csrf ?? '' };
}

/** Creates the clients, token, interaction and console session the OAuth and account requests name. */
export async function prepareOAuthFixtures(
  base: string,
  key: string,
  account: { email: string; password: string; project: string },
): Promise<OAuthFixtures> {
  const created = await call(base, 'POST', '/v1/me/oauth/clients', {
    token: key,
    body: { name: 'fuzz', scopes: ['memory:recall', 'project:read'], redirect_uris: [REDIRECT] },
  });
  if (created.status !== 201) throw new Error(`project client: ${created.status} ${created.text}`);
  const id = String(obj(created.body)['client_id']);
  const secret = String(obj(created.body)['client_secret']);
  const issued = await token(base, { grant_type: 'client_credentials', scope: 'memory:recall' }, basic(id, secret));
  if (issued.status !== 200) throw new Error(`client credentials: ${issued.status} ${JSON.stringify(issued.body)}`);
  const publicClient = await register(base, {
    client_name: 'fuzz-public',
    redirect_uris: [REDIRECT],
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
  });
  const { challenge } = pkce();
  const query = new URLSearchParams({
    client_id: String(publicClient['client_id']),
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'memory:recall',
    state: 'st4te',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const started = await fetch(`${base}/oauth/authorize?${query.toString()}`, { redirect: 'manual' });
  const interaction = (started.headers.get('location') ?? '').split('/').pop() ?? '';
  if (started.status !== 303 || interaction === '') throw new Error(`authorization request: ${started.status}`);
  return {
    base,
    projectClient: { id, secret, accessToken: String(issued.body['access_token']) },
    publicClient: {
      id: String(publicClient['client_id']),
      registrationToken: String(publicClient['registration_access_token']),
    },
    interaction,
    challenge,
    console: { ...account, ...(await consoleSession(base, account.email, account.password)) },
  };
}

const oneOf = (...values: string[]): Json => ({ type: 'string', enum: values });

/** Client metadata as registration takes it (RFC 7591), with fields the gateway refuses to register. */
function clientMetadata(f: OAuthFixtures): Json {
  return {
    type: 'object',
    required: ['redirect_uris'],
    properties: {
      redirect_uris: {
        type: 'array',
        minItems: 1,
        items: oneOf(REDIRECT, 'https://example.com/callback', 'not a uri'),
      },
      client_name: { type: 'string' },
      grant_types: { type: 'array', items: oneOf('authorization_code', 'refresh_token', 'client_credentials') },
      response_types: { type: 'array', items: oneOf('code', 'token') },
      token_endpoint_auth_method: oneOf('none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'),
      scope: oneOf('memory:recall mcp', 'openid offline_access', 'admin'),
      logo_uri: { type: 'string', format: 'uri' },
      project_id: oneOf(f.console.project),
      allowed_scopes: { type: 'array', items: oneOf('memory:recall') },
    },
  };
}

/** The OAuth endpoints as fuzz routes: query and form fields mostly valid, so requests reach the deep checks. */
export function oauthRoutes(f: OAuthFixtures): RouteSpec[] {
  const issuer = f.base;
  const resource = oneOf(issuer, `${issuer}/mcp`, 'https://elsewhere.example');
  const authorization = {
    client_id: oneOf(f.publicClient.id, f.projectClient.id),
    redirect_uri: oneOf(REDIRECT),
    response_type: oneOf('code', 'code', 'token'),
    scope: oneOf('memory:recall', 'mcp memory:recall offline_access', 'openid', 'memory:everything'),
    // Free text the server keeps with the request: often text the control plane cannot store.
    state: oneOf('st4te', 'a\u0000b', '\u0000'),
    login_hint: oneOf('ada@example.com', 'ada\u0000'),
    code_challenge: oneOf(f.challenge),
    code_challenge_method: oneOf('S256', 'S256', 'plain'),
    resource,
    prompt: oneOf('consent', 'login', 'none'),
  };
  // The fields the server checks are mostly valid, so requests get past them to where the free text is kept.
  const freeText = ['state', 'login_hint'];
  const authorizationQuery = Object.entries(authorization).map(([name, schema]) => ({
    name,
    schema,
    required: !['resource', 'prompt', 'login_hint'].includes(name),
    hostile: freeText.includes(name) ? 0.5 : 0.1,
  }));
  const tokens = oneOf(f.projectClient.accessToken, 'not-a-token');
  const form = { encoding: 'form', errors: 'oauth' } as const;
  const get = (path: string): RouteSpec => ({ method: 'GET', path, query: [], body: undefined, errors: 'oauth' });
  return [
    get('/.well-known/oauth-authorization-server'),
    get('/.well-known/openid-configuration'),
    get('/oauth/jwks'),
    { method: 'GET', path: '/.well-known/oauth-protected-resource', query: [], body: undefined },
    { method: 'GET', path: '/.well-known/oauth-protected-resource/mcp', query: [], body: undefined },
    {
      method: 'GET',
      path: '/oauth/authorize',
      query: authorizationQuery,
      body: undefined,
      errors: 'oauth',
    },
    { method: 'GET', path: '/oauth/authorize/{uid}', query: [], body: undefined, errors: 'oauth' },
    {
      method: 'POST',
      path: '/oauth/par',
      query: [],
      body: { type: 'object', required: ['client_id', 'response_type'], properties: authorization },
      ...form,
    },
    {
      method: 'POST',
      path: '/oauth/token',
      query: [],
      body: {
        type: 'object',
        required: ['grant_type'],
        properties: {
          grant_type: oneOf('client_credentials', 'authorization_code', 'refresh_token', 'password', 'implicit'),
          code: { type: 'string' },
          redirect_uri: oneOf(REDIRECT),
          code_verifier: { type: 'string' },
          refresh_token: { type: 'string' },
          scope: oneOf('memory:recall', 'project:read memory:recall', 'memory:delete', 'openid'),
          resource,
          client_id: oneOf(f.projectClient.id, f.publicClient.id),
          client_secret: oneOf(f.projectClient.secret, 'wrong'),
        },
      },
      ...form,
    },
    {
      method: 'POST',
      path: '/oauth/revoke',
      query: [],
      body: {
        type: 'object',
        required: ['token'],
        properties: { token: tokens, token_type_hint: oneOf('access_token', 'refresh_token', 'id_token') },
      },
      ...form,
    },
    {
      method: 'POST',
      path: '/oauth/introspect',
      query: [],
      body: {
        type: 'object',
        required: ['token'],
        properties: { token: tokens, token_type_hint: oneOf('access_token', 'refresh_token') },
      },
      ...form,
    },
    { method: 'POST', path: '/oauth/register', query: [], body: clientMetadata(f), errors: 'oauth' },
    { method: 'GET', path: '/oauth/register/{client_id}', query: [], body: undefined, errors: 'oauth' },
  ];
}

const SESSION_OPENERS = ['/v1/account/signup', '/v1/account/session'];

/** The credentials of an OAuth or account request: mostly the right ones, sometimes none or wrong ones. */
export function oauthHeaders(f: OAuthFixtures, route: RouteSpec, rng: Rng): Record<string, string> | undefined {
  const roll = rng.next();
  if (route.path.startsWith('/oauth/register/')) {
    if (roll < 0.8) return { authorization: `Bearer ${f.publicClient.registrationToken}` };
    return roll < 0.9 ? {} : { authorization: 'Bearer not-the-registration-token' };
  }
  if (route.path.startsWith('/oauth/') || route.path.startsWith('/.well-known/')) {
    if (roll < 0.5) return { authorization: basic(f.projectClient.id, f.projectClient.secret) };
    if (roll < 0.6) return { authorization: basic(f.projectClient.id, 'wrong') };
    return roll < 0.7 ? { authorization: 'Basic %%%' } : {};
  }
  if (!route.path.startsWith('/v1/account/')) return undefined;
  const opensSession = SESSION_OPENERS.includes(route.path) && route.method === 'POST';
  const session = { cookie: f.console.cookie, 'x-csrf-token': f.console.csrf };
  if (opensSession) return roll < 0.1 ? session : {};
  if (roll < 0.85) return session;
  if (roll < 0.92) return { cookie: f.console.cookie, 'x-csrf-token': 'wrong' };
  return roll < 0.96 ? { cookie: 'mnemos_session=not-a-session' } : {};
}

/** The console session on a /v1/me route: the account's cookie and CSRF token naming its project. */
export function consoleProjectHeaders(f: OAuthFixtures): Record<string, string> {
  return { cookie: f.console.cookie, 'x-csrf-token': f.console.csrf, 'x-mnemos-project': f.console.project };
}

/**
 * Restores the console session after an accepted sign-in, sign-up or sign-out (a sign-in replaces the browser's
 * session, a sign-out ends it). Answers whether it changed stored state.
 */
export async function restoreOAuthFixtures(f: OAuthFixtures, route: RouteSpec, answer: FuzzAnswer): Promise<boolean> {
  const opens = route.method === 'POST' && SESSION_OPENERS.includes(route.path);
  const ends = route.method === 'DELETE' && route.path === '/v1/account/session';
  if (answer.status >= 300 || !(opens || ends)) return false;
  Object.assign(f.console, await consoleSession(f.base, f.console.email, f.console.password));
  return true;
}
