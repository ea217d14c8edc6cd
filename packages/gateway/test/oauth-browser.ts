// OAuth test helpers: a cookie-keeping browser, PKCE pairs, token requests and the authorization-code flow driven
// over HTTP through the sign-in and consent pages.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { obj, toRes, type Json, type Res } from './helpers.js';

export const REDIRECT = 'http://127.0.0.1:9999/callback';
export const PASSWORD = 'correct horse battery';

/** A cookie-keeping HTTP client, as a browser is to the gateway: its cookies go with every call. */
export class Browser {
  private readonly jar = new Map<string, string>();
  /** The CSRF token of the console session, sent as X-CSRF-Token on state-changing JSON calls when set. */
  csrf: string | undefined;
  constructor(private readonly base: string) {}

  cookie(name: string): string | undefined {
    return this.jar.get(name);
  }

  setCookie(name: string, value: string): void {
    this.jar.set(name, value);
  }

  async go(method: string, url: string, form?: Record<string, string>): Promise<Response> {
    const headers: Record<string, string> = {};
    let body: string | undefined;
    if (form !== undefined) {
      body = new URLSearchParams(form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    return this.send(method, url, headers, body);
  }

  /** A JSON call as the console makes it (X-CSRF-Token on state-changing calls once `csrf` is known). */
  async json(method: string, url: string, body?: unknown, extra: Record<string, string> = {}): Promise<Res> {
    const headers: Record<string, string> = {};
    if (this.csrf !== undefined && !['GET', 'HEAD'].includes(method)) headers['x-csrf-token'] = this.csrf;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const text = body === undefined ? undefined : JSON.stringify(body);
    return toRes(await this.send(method, url, { ...headers, ...extra }, text));
  }

  private async send(
    method: string,
    url: string,
    headers: Record<string, string>,
    body: string | undefined,
  ): Promise<Response> {
    if (this.jar.size > 0) headers['cookie'] = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const target = url.startsWith('http') ? url : `${this.base}${url}`;
    const res = await fetch(target, { method, headers, body, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair?.indexOf('=') ?? -1;
      if (pair === undefined || i < 0) continue;
      const name = pair.slice(0, i);
      const value = pair.slice(i + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(c)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return res;
  }
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export const basic = (id: string, secret: string): string =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** POSTs a form to an OAuth endpoint (`/oauth/token` unless named) and returns the status and JSON answer. */
export async function token(
  base: string,
  params: Record<string, string>,
  auth?: string,
  endpoint = '/oauth/token',
): Promise<{ status: number; body: Json }> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (auth !== undefined) headers['authorization'] = auth;
  const body = new URLSearchParams(params).toString();
  const res = await fetch(`${base}${endpoint}`, { method: 'POST', headers, body });
  return { status: res.status, body: obj(await res.json()) };
}

/** The console's view of an interaction: what it shows on its sign-in and consent page. */
export async function interactionOf(browser: Browser, uid: string): Promise<Json> {
  const res = await browser.json('GET', `/v1/account/oauth/interactions/${uid}`);
  assert.equal(res.status, 200, res.text);
  return obj(res.body);
}

/** Follows an authorization URL to the console's sign-in page; returns the browser and the interaction uid. */
export async function openSignIn(base: string, authorizationUrl: string): Promise<{ browser: Browser; uid: string }> {
  const browser = new Browser(base);
  const start = await browser.go('GET', authorizationUrl);
  assert.equal(start.status, 303, await start.text());
  const interaction = start.headers.get('location') ?? '';
  assert.match(interaction, /^\/console\/oauth\/[A-Za-z0-9_-]+$/);
  const uid = interaction.split('/').pop() ?? '';
  const page = await interactionOf(browser, uid);
  assert.equal(page['prompt'], 'login');
  assert.equal(typeof obj(page['client'])['name'], 'string');
  return { browser, uid };
}

/** Signs in through the session endpoint as the console does; returns the answer. */
export async function signIn(browser: Browser, email: string, password: string): Promise<Res> {
  const res = await browser.json('POST', '/v1/account/session', { email, password });
  if (res.status === 200) browser.csrf = String(obj(res.body)['csrf_token']);
  return res;
}

/** Answers the consent (allow for a project, or deny) and follows the redirect back to the client. */
export async function decide(
  browser: Browser,
  uid: string,
  decision: { allow: boolean; project_id?: string },
): Promise<URL> {
  const answered = await browser.json('POST', `/v1/account/oauth/interactions/${uid}`, decision);
  assert.equal(answered.status, 200, answered.text);
  const resumed = await browser.go('GET', String(obj(answered.body)['redirect_to']));
  assert.equal(resumed.status, 303, await resumed.text());
  return new URL(resumed.headers.get('location') ?? '');
}

/** Signs in, allows the consent for a project (checking the scopes it lists) and returns the redirect back. */
export async function signInAndConsent(
  browser: Browser,
  uid: string,
  email: string,
  projectId: string,
  scopes: string[],
): Promise<URL> {
  const signedIn = await signIn(browser, email, PASSWORD);
  assert.equal(signedIn.status, 200, signedIn.text);
  const consent = await interactionOf(browser, uid);
  assert.equal(consent['prompt'], 'consent');
  const listed = (consent['scopes'] as Json[]).map((s) => String(s['name']));
  for (const s of scopes) assert.ok(listed.includes(s), `consent lists ${s}`);
  for (const s of consent['scopes'] as Json[]) {
    assert.ok(String(s['description']).length > 0, `${String(s['name'])} is described`);
  }
  return decide(browser, uid, { allow: true, project_id: projectId });
}

/** Drives the authorization-code flow like a browser (one wrong password first); returns the redirect back. */
export async function authorize(
  base: string,
  clientId: string,
  scope: string,
  email: string,
  projectId: string,
  challenge: string,
  extra: Record<string, string> = {},
): Promise<URL> {
  const { browser, uid } = await openSignIn(base, authorizeUrlOf(clientId, scope, challenge, extra));
  const bad = await signIn(browser, email, 'wrong password');
  assert.equal(bad.status, 401);
  const listed = scope.split(' ').filter((s) => s.includes(':') || s === 'mcp');
  return signInAndConsent(browser, uid, email, projectId, listed);
}

/** An authorization request with PKCE to the test redirect. */
export function authorizeUrlOf(
  clientId: string,
  scope: string,
  challenge: string,
  extra: Record<string, string> = {},
): string {
  const q = new URLSearchParams({
    client_id: clientId,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope,
    state: 'st4te',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  });
  return `/oauth/authorize?${q.toString()}`;
}
