// OAuth that MCP clients can use and that cannot be abused: registration with `scope` and malformed metadata,
// discovery that names only GATEWAY_PUBLIC_URL, invalid_scope for client credentials, introspection limited to the
// token's own client, and sign-in throttling on the console's sign-in endpoint during an authorization.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { call, obj, setupProject, startHarness, type Harness, type Json, type Res } from './helpers.js';
import { SignInThrottle } from '../src/oauth/signin-throttle.js';
import { basic, interactionOf, openSignIn, PASSWORD, pkce, REDIRECT, signIn, token } from './oauth-browser.js';

const DEAD_ENGINE = 'http://127.0.0.1:9';
const PUBLIC_URL = 'https://mnemos.example.com';
const SEVEN = [
  'memory:retain',
  'memory:recall',
  'memory:reflect',
  'memory:delete',
  'mcp',
  'project:read',
  'project:write',
];
const PUBLIC_CLIENT = { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' };

/** An authorization request with PKCE, as a public client sends it. */
const authorizeUrl = (clientId: string, scope: string, extra: Record<string, string> = {}): string =>
  `/oauth/authorize?${new URLSearchParams({
    client_id: clientId,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope,
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
    ...extra,
  }).toString()}`;

describe('OAuth interoperability and abuse resistance', () => {
  let h: Harness;
  let db: pg.Client;
  let project: { projectId: string; key: string; accountId: string };
  let email: string;

  before(async () => {
    h = await startHarness(DEAD_ENGINE, {
      GATEWAY_PUBLIC_URL: PUBLIC_URL,
      GATEWAY_SIGNIN_MAX_FAILURES_PER_ACCOUNT: '2',
      GATEWAY_SIGNIN_MAX_FAILURES_PER_ADDRESS: '5',
      // This file registers many clients from one address; the registration throttle has its own gateway below.
      GATEWAY_OAUTH_REGISTRATION_MAX_PER_ADDRESS: '1000',
      GATEWAY_OAUTH_REGISTRATION_MAX_TOTAL: '1000',
    });
    db = new pg.Client({ connectionString: h.db.url });
    await db.connect();
    email = `owner${randomBytes(3).toString('hex')}@example.com`;
    project = await setupProject(h.url, { email, password: PASSWORD });
  });
  after(async () => {
    await db.end();
    await h.close();
  });

  const clientCount = async (): Promise<number> =>
    Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM oauth_clients')).rows[0]?.n);
  const register = (body: Json): Promise<Res> => call(h.url, 'POST', '/oauth/register', { body });
  const registerId = async (body: Json): Promise<string> => {
    const reg = await register(body);
    assert.equal(reg.status, 201, reg.text);
    return String(obj(reg.body)['client_id']);
  };
  const projectClient = async (key: string, scopes: string[]): Promise<{ id: string; secret: string }> => {
    const created = await call(h.url, 'POST', '/v1/me/oauth/clients', { token: key, body: { name: 'svc', scopes } });
    assert.equal(created.status, 201, created.text);
    const b = obj(created.body);
    return { id: String(b['client_id']), secret: String(b['client_secret']) };
  };

  it('registers clients that name any subset of the seven scopes', async () => {
    for (const scope of [SEVEN.join(' '), 'mcp memory:recall', 'project:read']) {
      const reg = await register({ ...PUBLIC_CLIENT, client_name: 'MCP client', scope });
      assert.equal(reg.status, 201, reg.text);
      assert.deepEqual(String(obj(reg.body)['scope']).split(' ').sort(), scope.split(' ').sort());
    }
  });

  it('answers malformed registrations with RFC 7591 errors and stores nothing', async () => {
    const before = await clientCount();
    const bad: Json[] = [
      { redirect_uris: [REDIRECT], scope: 'mcp memory:everything' },
      { redirect_uris: [REDIRECT], scope: 'openid admin' },
      { redirect_uris: [REDIRECT], grant_types: 0 },
      { redirect_uris: [REDIRECT], grant_types: 'authorization_code' },
      { redirect_uris: [REDIRECT], grant_types: [1] },
      { redirect_uris: [REDIRECT], client_name: 'evil\u0000name' },
      { redirect_uris: [REDIRECT], client_name: 'half \uD800 pair' },
      { redirect_uris: [`${REDIRECT}\u0000`] },
      { redirect_uris: [REDIRECT], client_uri: 'https://example.com/\u0000' },
      { redirect_uris: [REDIRECT], contacts: ['a\u0000@example.com'] },
      { redirect_uris: [REDIRECT], client_name: 5 },
      { redirect_uris: [REDIRECT], client_name: 'x'.repeat(201) },
      { redirect_uris: [REDIRECT], scope: 5 },
      { redirect_uris: [REDIRECT], scope: ['mcp'] },
      { redirect_uris: 'http://127.0.0.1:9999/callback' },
      { redirect_uris: [REDIRECT], token_endpoint_auth_method: ['none'] },
      { redirect_uris: [REDIRECT], response_types: 0 },
      { redirect_uris: [REDIRECT], grant_types: ['client_credentials'] },
      { redirect_uris: [REDIRECT], project_id: project.projectId },
      { redirect_uris: [REDIRECT], allowed_scopes: 'project:write' },
    ];
    for (const body of bad) {
      const res = await register(body);
      const text = JSON.stringify(body);
      assert.equal(res.status, 400, `${text}: ${res.status} ${res.text}`);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/, text);
      const b = obj(res.body);
      const codes = ['invalid_client_metadata', 'invalid_redirect_uri'];
      assert.ok(codes.includes(String(b['error'])), `${text}: ${res.text}`);
      assert.equal(typeof b['error_description'], 'string', text);
    }
    const scopeError = await register({ redirect_uris: [REDIRECT], scope: 'mcp memory:everything' });
    assert.equal(obj(scopeError.body)['error'], 'invalid_client_metadata');
    assert.equal(await clientCount(), before);
  });

  it('refuses http redirect URIs other than loopback, and URLs the server would fetch, storing nothing', async () => {
    const before = await clientCount();
    const notLoopback = [
      'http://app.example.com/callback',
      'http://192.0.2.10:8080/callback',
      'http://localhost.example.com/callback',
      'http://127.0.0.2/callback',
      'http://[::2]/callback',
    ];
    for (const uri of notLoopback) {
      for (const redirect_uris of [[uri], [REDIRECT, uri]]) {
        const res = await register({ ...PUBLIC_CLIENT, redirect_uris });
        assert.equal(res.status, 400, `${uri}: ${res.text}`);
        assert.equal(obj(res.body)['error'], 'invalid_redirect_uri', res.text);
        assert.equal(
          obj(res.body)['error_description'],
          `redirect_uris: ${uri} uses http, which is allowed only for loopback addresses (127.0.0.1, [::1], ` +
            'localhost); use https for any other host',
        );
      }
    }
    // The gateway fetches nothing a client names: no key set, no sector identifier.
    let fetched = 0;
    const site = createServer((_req, res) => {
      fetched += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":[]}');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    const siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    try {
      const jwks = await register({ ...PUBLIC_CLIENT, jwks_uri: `${siteUrl}/jwks.json` });
      assert.equal(jwks.status, 400, jwks.text);
      assert.deepEqual(obj(jwks.body), {
        error: 'invalid_client_metadata',
        error_description:
          'jwks_uri is not supported: this server fetches no client keys; register without it and authenticate ' +
          'with client_secret_basic, client_secret_post or none',
      });
      const sector = await register({ ...PUBLIC_CLIENT, sector_identifier_uri: `${siteUrl}/sector.json` });
      assert.equal(sector.status, 400, sector.text);
      assert.equal(obj(sector.body)['error'], 'invalid_client_metadata');
      assert.match(String(obj(sector.body)['error_description']), /^sector_identifier_uri is not supported/);
    } finally {
      site.close();
    }
    assert.equal(fetched, 0, 'nothing was fetched');
    assert.equal(await clientCount(), before);
    // Loopback over http (any port) and https anywhere are registered.
    for (const uri of ['http://localhost:3000/cb', 'http://[::1]:8080/cb', REDIRECT, 'https://app.example.com/cb']) {
      const res = await register({ ...PUBLIC_CLIENT, redirect_uris: [uri] });
      assert.equal(res.status, 201, `${uri}: ${res.text}`);
    }
  });

  it('treats identifiers the database cannot hold as unknown, never a server error', async () => {
    for (const id of ['\u0000', 'cli_\uD800']) {
      const t = await token(h.url, {
        grant_type: 'client_credentials',
        client_id: id,
        client_secret: 'x',
        scope: 'mcp',
      });
      assert.equal(t.status, 401, JSON.stringify(t.body));
      assert.equal(t.body['error'], 'invalid_client');
      const page = await fetch(`${h.url}${authorizeUrl(id, 'mcp')}`, { redirect: 'manual' });
      assert.equal(page.status, 400, await page.text());
    }
  });

  it('limits authorization requests to the scopes a client registered, or the MCP scopes by default', async () => {
    const narrow = await registerId({ ...PUBLIC_CLIENT, scope: 'mcp memory:recall' });
    const wider = authorizeUrl(narrow, 'mcp memory:recall memory:retain');
    const refused = await fetch(`${h.url}${wider}`, { redirect: 'manual' });
    const back = new URL(refused.headers.get('location') ?? 'http://x/');
    assert.equal(back.origin + back.pathname, REDIRECT);
    assert.equal(back.searchParams.get('error'), 'invalid_scope');

    const plain = await registerId(PUBLIC_CLIENT);
    const { browser, uid } = await openSignIn(h.url, authorizeUrl(plain, 'mcp memory:recall project:write'));
    const signedIn = await signIn(browser, email, PASSWORD);
    assert.equal(signedIn.status, 200, signedIn.text);
    const consent = await interactionOf(browser, uid);
    assert.equal(consent['prompt'], 'consent');
    const page = JSON.stringify(consent);
    assert.ok(page.includes('memory:recall'), page);
    assert.ok(!page.includes('project:write'), 'project:write is not offered to a client that registered no scope');
  });

  it('names GATEWAY_PUBLIC_URL in every metadata URL, never the address asked', async () => {
    const urlsIn = (m: Json): string[] =>
      Object.values(m).filter((v): v is string => typeof v === 'string' && /^https?:/.test(v));
    for (const p of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const m = obj((await call(h.url, 'GET', p)).body);
      assert.equal(m['issuer'], PUBLIC_URL);
      for (const k of ['revocation_endpoint', 'introspection_endpoint']) assert.equal(typeof m[k], 'string', k);
      assert.equal(m['token_endpoint'], `${PUBLIC_URL}/oauth/token`);
      assert.equal(m['jwks_uri'], `${PUBLIC_URL}/oauth/jwks`);
      assert.equal(m['registration_endpoint'], `${PUBLIC_URL}/oauth/register`);
      assert.equal(m['authorization_endpoint'], `${PUBLIC_URL}/oauth/authorize`);
      for (const u of urlsIn(m)) assert.ok(u.startsWith(`${PUBLIC_URL}/`) || u === PUBLIC_URL, `${p}: ${u}`);
    }
    const managed = String(obj((await register(PUBLIC_CLIENT)).body)['registration_client_uri']);
    assert.ok(managed.startsWith(`${PUBLIC_URL}/oauth/`), managed);

    const resources = [
      ['/.well-known/oauth-protected-resource', PUBLIC_URL],
      ['/.well-known/oauth-protected-resource/mcp', `${PUBLIC_URL}/mcp`],
    ] as const;
    for (const [p, resource] of resources) {
      const prm = obj((await call(h.url, 'GET', p)).body);
      assert.equal(prm['resource'], resource);
      assert.deepEqual(prm['authorization_servers'], [PUBLIC_URL]);
      const doc = String(prm['resource_documentation']);
      assert.ok(doc.startsWith(`${PUBLIC_URL}/`), doc);
      // The documentation page exists (asked at the gateway's own address).
      const page = await call(h.url, 'GET', new URL(doc).pathname);
      assert.equal(page.status, 200, `${doc}: ${page.status}`);
    }
  });

  it('answers client credentials without scope, or with a scope the client lacks, with invalid_scope', async () => {
    const { id, secret } = await projectClient(project.key, ['memory:recall', 'project:read']);
    const asks: Array<Record<string, string>> = [
      {},
      { scope: '' },
      { scope: 'memory:delete' },
      { scope: 'project:read project:write' },
      { scope: 'openid' },
    ];
    for (const params of asks) {
      const t = await token(h.url, { grant_type: 'client_credentials', ...params }, basic(id, secret));
      assert.equal(t.status, 400, JSON.stringify(params));
      assert.equal(t.body['error'], 'invalid_scope', JSON.stringify(t.body));
      assert.equal(typeof t.body['error_description'], 'string');
      assert.equal(t.body['access_token'], undefined);
    }
    const both = { grant_type: 'client_credentials', scope: 'project:read memory:recall' };
    const ok = await token(h.url, both, basic(id, secret));
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.deepEqual(String(ok.body['scope']).split(' ').sort(), ['memory:recall', 'project:read']);
  });

  it('lets only the client a token was issued to introspect it', async () => {
    const other = await setupProject(h.url, { scopes: ['project:write', 'project:read'] });
    const mint = async (key: string): Promise<{ id: string; secret: string; at: string }> => {
      const { id, secret } = await projectClient(key, ['project:read']);
      const t = await token(h.url, { grant_type: 'client_credentials', scope: 'project:read' }, basic(id, secret));
      assert.equal(t.status, 200, JSON.stringify(t.body));
      return { id, secret, at: String(t.body['access_token']) };
    };
    const mine = await mint(project.key);
    const sibling = await mint(project.key);
    const foreign = await mint(other.key);
    const introspect = async (who: { id: string; secret: string }, value: string): Promise<Json> => {
      const res = await token(h.url, { token: value }, basic(who.id, who.secret), '/oauth/introspect');
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body;
    };
    const own = await introspect(mine, mine.at);
    assert.equal(own['active'], true);
    assert.equal(own['client_id'], mine.id);
    assert.deepEqual(await introspect(foreign, mine.at), { active: false });
    assert.deepEqual(await introspect(sibling, mine.at), { active: false });
    assert.deepEqual(await introspect(mine, foreign.at), { active: false });
  });

  it('throttles failed sign-ins per account and per address with 429 and Retry-After', async () => {
    const clientId = await registerId({ ...PUBLIC_CLIENT, client_name: 'app' });
    const resource = `${PUBLIC_URL}/mcp`;
    const { browser, uid } = await openSignIn(h.url, authorizeUrl(clientId, 'mcp memory:recall', { resource }));
    const attempt = (who: string, password: string): Promise<Res> =>
      browser.json('POST', '/v1/account/session', { email: who, password });

    // A correct password clears the account's count.
    assert.equal((await attempt(email, 'wrong 1')).status, 401);
    // A NUL is refused by the input layer before any sign-in logic: 400, and it counts as no guess.
    assert.equal((await attempt(`${email}\u0000`, PASSWORD)).status, 400, 'an email with NUL is refused');
    assert.equal((await attempt(email, PASSWORD)).status, 200);
    // Two failures for the account (allowance 2): the next attempt is refused, even with the right password.
    assert.equal((await attempt(email, 'wrong 2')).status, 401);
    assert.equal((await attempt(email.toUpperCase(), 'wrong 3')).status, 401);
    const paused = await attempt(email, PASSWORD);
    assert.equal(paused.status, 429);
    const retryAfter = Number(paused.headers.get('retry-after'));
    assert.ok(retryAfter > 0 && retryAfter <= 900, String(retryAfter));
    const when = /Too many failed sign-ins[\s\S]*Try again in\s+\d+ minutes? \(at \d\d:\d\d UTC\)/;
    assert.match(paused.text, when);

    // Guessing across accounts from one address: five failures in all (wrong 1-3 and two more), then 429 for any
    // account.
    assert.equal((await attempt('nobody1@example.com', 'x')).status, 401);
    assert.equal((await attempt('nobody2@example.com', 'x')).status, 401);
    const addressPaused = await attempt('nobody3@example.com', 'x');
    assert.equal(addressPaused.status, 429);
    assert.ok(Number(addressPaused.headers.get('retry-after')) > 0);
    // The pause is not a lockout of the flow itself: the console page still loads, it only refuses passwords.
    assert.equal((await browser.json('GET', `/v1/account/oauth/interactions/${uid}`)).status, 200);
  });
});

describe('dynamic registration throttle', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness(DEAD_ENGINE, {
      GATEWAY_TRUST_PROXY: 'true',
      GATEWAY_OAUTH_REGISTRATION_MAX_PER_ADDRESS: '2',
      GATEWAY_OAUTH_REGISTRATION_MAX_TOTAL: '3',
    });
  });
  after(async () => {
    await h.close();
  });

  const registerFrom = (address: string, path = '/oauth/register'): Promise<Res> =>
    call(h.url, 'POST', path, { body: PUBLIC_CLIENT, headers: { 'x-forwarded-for': address } });
  const clientCount = async (): Promise<number> => {
    const db = new pg.Client({ connectionString: h.db.url });
    await db.connect();
    try {
      return Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM oauth_clients')).rows[0]?.n);
    } finally {
      await db.end();
    }
  };
  const assertThrottled = (res: Res, detail: RegExp): void => {
    assert.equal(res.status, 429, res.text);
    assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
    const retryAfter = Number(res.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 3600, String(retryAfter));
    assert.equal(obj(res.body)['code'], 'rate_limited');
    assert.match(String(obj(res.body)['detail']), detail);
  };

  it('registers the allowance per address, then answers 429 with Retry-After, per address and in all', async () => {
    for (let i = 0; i < 2; i++) assert.equal((await registerFrom('198.51.100.1')).status, 201);
    const count = await clientCount();
    const fromAddress = /^Too many OAuth client registrations from this address \(2 per hour\)/;
    assertThrottled(await registerFrom('198.51.100.1'), fromAddress);
    // Only the registration endpoint itself reaches the OAuth server: another spelling is the gateway's refusal.
    const slash = await registerFrom('198.51.100.1', '/oauth/register/?x=1');
    assert.ok(slash.status === 404 || slash.status === 405, slash.text);
    assert.equal(await clientCount(), count, 'a throttled or refused registration stores nothing');
    assert.equal((await registerFrom('198.51.100.2')).status, 201, 'another address registers');
    assertThrottled(await registerFrom('198.51.100.3'), /^This server takes at most 3 OAuth client registrations/);
    assert.equal(await clientCount(), count + 1);
    // Other OAuth endpoints are not counted.
    const metadata = await call(h.url, 'GET', '/.well-known/oauth-authorization-server', {
      headers: { 'x-forwarded-for': '198.51.100.1' },
    });
    assert.equal(metadata.status, 200);
  });
});

describe('sign-in throttle windows', () => {
  it('pauses an account after its allowance and lets it try again when the window ends', () => {
    let now = 1_000_000;
    const throttle = new SignInThrottle({ perAccount: 3, perAddress: 100, windowMs: 60_000 }, () => now);
    for (let i = 0; i < 3; i++) {
      assert.equal(throttle.waitMs('a@example.com', '10.0.0.1'), 0);
      throttle.recordFailure('a@example.com', '10.0.0.1');
    }
    assert.equal(throttle.waitMs('A@Example.com ', '10.0.0.2'), 60_000);
    assert.equal(throttle.waitMs('b@example.com', '10.0.0.1'), 0);
    now += 45_000;
    assert.equal(throttle.waitMs('a@example.com', '10.0.0.1'), 15_000);
    now += 15_000;
    assert.equal(throttle.waitMs('a@example.com', '10.0.0.1'), 0);
    throttle.recordFailure('a@example.com', '10.0.0.1');
    assert.equal(throttle.waitMs('a@example.com', '10.0.0.1'), 0, 'a new window starts with one failure');
  });
});
