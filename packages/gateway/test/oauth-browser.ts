// OAuth test helpers: a cookie-keeping browser, PKCE pairs, token requests and the authorization-code flow driven
// over HTTP through the sign-in and consent pages.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { obj, type Json } from './helpers.js';

export const REDIRECT = 'http://127.0.0.1:9999/callback';
export const PASSWORD = 'correct horse battery';

export class Browser {
  private readonly jar = new Map<string, string>();
  constructor(private readonly base: string) {}

  async go(method: string, url: string, form?: Record<string, string>): Promise<Response> {
    const headers: Record<string, string> = {};
    if (this.jar.size > 0) headers['cookie'] = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (form !== undefined) {
      body = new URLSearchParams(form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
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
  base: string, params: Record<string, string>, auth?: string, endpoint = '/oauth/token',
): Promise<{ status: number; body: Json }> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (auth !== undefined) headers['authorization'] = auth;
  const body = new URLSearchParams(params).toString();
  const res = await fetch(`${base}${endpoint}`, { method: 'POST', headers, body });
  return { status: res.status, body: obj(await res.json()) };
}

/** Follows an authorization URL to the sign-in page; returns the browser and the interaction uid. */
export async function openSignIn(base: string, authorizationUrl: string): Promise<{ browser: Browser; uid: string }> {
  const browser = new Browser(base);
  const start = await browser.go('GET', authorizationUrl);
  assert.equal(start.status, 303, await start.text());
  const interaction = start.headers.get('location') ?? '';
  assert.match(interaction, /\/oauth\/interaction\//);
  const loginPage = await browser.go('GET', interaction);
  assert.equal(loginPage.status, 200);
  assert.match(await loginPage.text(), /Sign in/);
  return { browser, uid: interaction.split('/').pop() ?? '' };
}

/** Signs in, allows the consent page for a project and returns the redirect back to the client. */
export async function signInAndConsent(
  browser: Browser, uid: string, email: string, projectId: string, scopes: string[],
): Promise<URL> {
  const consent = await browser.go('POST', `/oauth/interaction/${uid}/login`, { email, password: PASSWORD });
  const consentHtml = await consent.text();
  assert.equal(consent.status, 200, consentHtml);
  for (const s of scopes) assert.ok(consentHtml.includes(s), `consent lists ${s}`);
  const proof = /name="proof" value="([^"]+)"/.exec(consentHtml)?.[1] ?? '';
  const confirmed = await browser.go('POST', `/oauth/interaction/${uid}/confirm`, { proof, project: projectId });
  assert.equal(confirmed.status, 303, await confirmed.text());
  const resumed = await browser.go('GET', confirmed.headers.get('location') ?? '');
  assert.equal(resumed.status, 303, await resumed.text());
  return new URL(resumed.headers.get('location') ?? '');
}

/** Drives the authorization-code flow like a browser (one wrong password first); returns the redirect back. */
export async function authorize(
  base: string, clientId: string, scope: string, email: string, projectId: string, challenge: string,
  extra: Record<string, string> = {},
): Promise<URL> {
  const q = new URLSearchParams({
    client_id: clientId, redirect_uri: REDIRECT, response_type: 'code', scope, state: 'st4te',
    code_challenge: challenge, code_challenge_method: 'S256', ...extra,
  });
  const { browser, uid } = await openSignIn(base, `/oauth/authorize?${q.toString()}`);
  const bad = await browser.go('POST', `/oauth/interaction/${uid}/login`, { email, password: 'wrong password' });
  assert.equal(bad.status, 401);
  const listed = scope.split(' ').filter((s) => s.includes(':') || s === 'mcp');
  return signInAndConsent(browser, uid, email, projectId, listed);
}
