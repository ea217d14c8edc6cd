// OAuth 2.0 over HTTP: authorization code with PKCE (the console's sign-in and consent calls), client credentials,
// refresh, revocation, client deletion, dynamic registration, discovery metadata, MCP discovery and scope checks.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, call, isProblem, obj, setupProject, startHarness, type Harness, type Json } from './helpers.js';
import {
  authorize,
  authorizeUrlOf,
  basic,
  Browser,
  decide,
  interactionOf,
  openSignIn,
  PASSWORD,
  pkce,
  REDIRECT,
  signIn,
  token,
} from './oauth-browser.js';

const DEAD_ENGINE = 'http://127.0.0.1:9';

describe('OAuth 2.0', () => {
  let h: Harness;
  let project: { projectId: string; key: string; accountId: string };
  let email: string;
  before(async () => {
    h = await startHarness(DEAD_ENGINE);
    email = `owner${randomBytes(3).toString('hex')}@example.com`;
    project = await setupProject(h.url, { email, password: PASSWORD });
  });
  after(async () => {
    await h.close();
  });

  it('publishes authorization-server and protected-resource metadata', async () => {
    for (const p of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const res = await call(h.url, 'GET', p);
      assert.equal(res.status, 200, res.text);
      const m = obj(res.body);
      assert.equal(m['issuer'], h.url);
      assert.equal(m['authorization_endpoint'], `${h.url}/oauth/authorize`);
      assert.equal(m['token_endpoint'], `${h.url}/oauth/token`);
      assert.equal(m['registration_endpoint'], `${h.url}/oauth/register`);
      assert.equal(m['revocation_endpoint'], `${h.url}/oauth/revoke`);
      assert.deepEqual(m['code_challenge_methods_supported'], ['S256']);
      for (const s of [
        'memory:retain',
        'memory:recall',
        'memory:reflect',
        'memory:delete',
        'mcp',
        'project:read',
        'project:write',
      ]) {
        assert.ok((m['scopes_supported'] as string[]).includes(s), s);
      }
      assert.ok((m['grant_types_supported'] as string[]).includes('client_credentials'));
    }
    const unauth = await call(h.url, 'POST', '/mcp', { body: { jsonrpc: '2.0', id: 1, method: 'initialize' } });
    assert.ok(isProblem(unauth, 401));
    const www = unauth.headers.get('www-authenticate') ?? '';
    const metaUrl = /resource_metadata="([^"]+)"/.exec(www)?.[1] ?? '';
    assert.equal(metaUrl, `${h.url}/.well-known/oauth-protected-resource/mcp`);
    const prm = obj((await call(h.url, 'GET', new URL(metaUrl).pathname)).body);
    assert.equal(prm['resource'], `${h.url}/mcp`);
    assert.deepEqual(prm['authorization_servers'], [h.url]);
  });

  it('client credentials: tokens carry the project and only the requested scopes', async () => {
    const created = await call(h.url, 'POST', '/v1/me/oauth/clients', {
      token: project.key,
      body: { name: 'backend', scopes: ['memory:recall', 'project:read'] },
    });
    assert.equal(created.status, 201, created.text);
    const { client_id: id, client_secret: secret } = obj(created.body) as { client_id: string; client_secret: string };
    assert.ok(id.length > 0 && secret.length >= 32);
    const listed = await call(h.url, 'GET', '/v1/me/oauth/clients', { token: project.key });
    assert.ok(!listed.text.includes(secret), 'the secret is shown only once');

    const t = await token(h.url, { grant_type: 'client_credentials', scope: 'project:read' }, basic(id, secret));
    assert.equal(t.status, 200, JSON.stringify(t.body));
    const at = String(t.body['access_token']);
    const usage = await call(h.url, 'GET', '/v1/me/usage', { token: at });
    assert.equal(usage.status, 200, usage.text);
    // Not requested, so not granted; and never more than the client holds.
    assert.ok(
      isProblem(
        await call(h.url, 'POST', '/v1/me/banks/x/memories/recall', { token: at, body: { query: 'q' } }),
        403,
        'insufficient_scope',
      ),
    );
    const tooMuch = await token(
      h.url,
      { grant_type: 'client_credentials', scope: 'memory:delete project:read' },
      basic(id, secret),
    );
    assert.equal(tooMuch.status, 400, JSON.stringify(tooMuch.body));
    assert.equal(tooMuch.body['error'], 'invalid_scope');
    const wrong = await token(
      h.url,
      { grant_type: 'client_credentials', scope: 'project:read' },
      basic(id, `${secret}x`),
    );
    assert.equal(wrong.status, 401);
    const recallToken = await token(
      h.url,
      { grant_type: 'client_credentials', scope: 'memory:recall project:read' },
      basic(id, secret),
    );
    const rt = String(recallToken.body['access_token']);
    // Scope passes, so the request reaches forwarding (the engine here is down: 503).
    assert.ok(
      isProblem(await call(h.url, 'POST', '/v1/me/banks/x/memories/recall', { token: rt, body: { query: 'q' } }), 503),
    );

    // Revocation works at once; deleting the client kills its remaining tokens at once.
    const rev = await fetch(`${h.url}/oauth/revoke`, {
      method: 'POST',
      headers: { authorization: basic(id, secret), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: at }).toString(),
    });
    assert.equal(rev.status, 200);
    assert.ok(isProblem(await call(h.url, 'GET', '/v1/me/usage', { token: at }), 401));
    assert.equal((await call(h.url, 'GET', '/v1/me/usage', { token: rt })).status, 200);
    assert.equal((await call(h.url, 'DELETE', `/v1/me/oauth/clients/${id}`, { token: project.key })).status, 200);
    assert.ok(isProblem(await call(h.url, 'GET', '/v1/me/usage', { token: rt }), 401));
    assert.equal(
      (await token(h.url, { grant_type: 'client_credentials', scope: 'project:read' }, basic(id, secret))).status,
      401,
    );
  });

  it('authorization code with PKCE, driven over HTTP, then refresh and revocation', async () => {
    const created = await call(h.url, 'POST', `/admin/projects/${project.projectId}/oauth/clients`, {
      token: ADMIN_TOKEN,
      body: { name: 'Web App', scopes: ['memory:recall', 'project:read', 'memory:retain'], redirect_uris: [REDIRECT] },
    });
    assert.equal(created.status, 201, created.text);
    const { client_id: id, client_secret: secret } = obj(created.body) as { client_id: string; client_secret: string };
    const { verifier, challenge } = pkce();
    const back = await authorize(h.url, id, 'memory:recall project:read', email, project.projectId, challenge);
    assert.equal(back.origin + back.pathname, REDIRECT);
    assert.equal(back.searchParams.get('state'), 'st4te');
    const code = back.searchParams.get('code') ?? '';
    assert.ok(code.length > 0, back.toString());

    const badVerifier = await token(
      h.url,
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: pkce().verifier },
      basic(id, secret),
    );
    assert.equal(badVerifier.status, 400);
    assert.equal(badVerifier.body['error'], 'invalid_grant');
    // The code was burnt by the failed attempt? Either way, get a fresh one for the real exchange.
    const back2 = await authorize(h.url, id, 'memory:recall project:read', email, project.projectId, challenge);
    const t = await token(
      h.url,
      {
        grant_type: 'authorization_code',
        code: back2.searchParams.get('code') ?? '',
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      },
      basic(id, secret),
    );
    assert.equal(t.status, 200, JSON.stringify(t.body));
    const at = String(t.body['access_token']);
    const refresh = String(t.body['refresh_token']);
    assert.ok(refresh.length > 10, 'a refresh token is issued');
    assert.deepEqual(String(t.body['scope']).split(' ').sort(), ['memory:recall', 'project:read']);
    const usage = await call(h.url, 'GET', '/v1/me/usage', { token: at });
    assert.equal(usage.status, 200, usage.text);
    assert.ok(
      isProblem(
        await call(h.url, 'POST', '/v1/me/banks/x/memories', { token: at, body: { content: 'x' } }),
        403,
        'insufficient_scope',
      ),
    );
    assert.ok(isProblem(await call(h.url, 'POST', '/v1/me/keys', { token: at, body: {} }), 403, 'insufficient_scope'));

    const refreshed = await token(h.url, { grant_type: 'refresh_token', refresh_token: refresh }, basic(id, secret));
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    const at2 = String(refreshed.body['access_token']);
    assert.equal((await call(h.url, 'GET', '/v1/me/usage', { token: at2 })).status, 200);

    // Revoking the refresh token revokes the grant: every token of it fails at once.
    const newRefresh = String(refreshed.body['refresh_token']);
    const rev = await fetch(`${h.url}/oauth/revoke`, {
      method: 'POST',
      headers: { authorization: basic(id, secret), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: newRefresh, token_type_hint: 'refresh_token' }).toString(),
    });
    assert.equal(rev.status, 200);
    assert.ok(isProblem(await call(h.url, 'GET', '/v1/me/usage', { token: at2 }), 401));
    assert.equal(
      (await token(h.url, { grant_type: 'refresh_token', refresh_token: newRefresh }, basic(id, secret))).status,
      400,
    );

    // PKCE is required.
    const browser = new Browser(h.url);
    const noPkce = await browser.go(
      'GET',
      `/oauth/authorize?${new URLSearchParams({ client_id: id, redirect_uri: REDIRECT, response_type: 'code', scope: 'memory:recall', state: 's' }).toString()}`,
    );
    const loc = new URL(noPkce.headers.get('location') ?? 'http://x/');
    assert.equal(loc.searchParams.get('error'), 'invalid_request');
  });

  it('dynamic registration for MCP clients, then MCP scope checks per tool', async () => {
    const reg = await call(h.url, 'POST', '/oauth/register', {
      body: {
        client_name: 'Claude Desktop',
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
      },
    });
    assert.equal(reg.status, 201, reg.text);
    const clientId = String(obj(reg.body)['client_id']);
    const cc = await call(h.url, 'POST', '/oauth/register', {
      body: { redirect_uris: [REDIRECT], grant_types: ['client_credentials'] },
    });
    assert.equal(cc.status, 400, cc.text);
    const named = await call(h.url, 'POST', '/oauth/register', {
      body: { redirect_uris: [REDIRECT], project_id: project.projectId },
    });
    assert.equal(named.status, 400, named.text);

    const { verifier, challenge } = pkce();
    const back = await authorize(h.url, clientId, 'mcp memory:recall', email, project.projectId, challenge, {
      resource: `${h.url}/mcp`,
    });
    const t = await token(h.url, {
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') ?? '',
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      client_id: clientId,
      resource: `${h.url}/mcp`,
    });
    assert.equal(t.status, 200, JSON.stringify(t.body));
    const at = String(t.body['access_token']);
    const rpc = (name: string): Json => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name, arguments: { bank_id: 'b', query: 'q' } },
    });
    const headers = { accept: 'application/json, text/event-stream' };
    // recall passes the scope checks and reaches the (down) engine; delete and retain need their own scopes.
    assert.ok(isProblem(await call(h.url, 'POST', '/mcp', { token: at, body: rpc('recall'), headers }), 503));
    assert.ok(
      isProblem(
        await call(h.url, 'POST', '/mcp', { token: at, body: rpc('delete_memory'), headers }),
        403,
        'insufficient_scope',
      ),
    );
    assert.ok(
      isProblem(
        await call(h.url, 'POST', '/mcp', { token: at, body: [rpc('recall'), rpc('retain')], headers }),
        403,
        'insufficient_scope',
      ),
    );
    // Registered clients belong to no project: another account's sign-in cannot reach this project.
    const other = await setupProject(h.url, {
      email: `other${randomBytes(3).toString('hex')}@example.com`,
      password: PASSWORD,
    });
    assert.notEqual(other.projectId, project.projectId);
  });

  it('console consent: deny gives access_denied; a foreign project, no CSRF or no session are refused', async () => {
    const client = { name: 'Notes App', scopes: ['memory:recall'], redirect_uris: [REDIRECT] };
    const created = await call(h.url, 'POST', '/v1/me/oauth/clients', { token: project.key, body: client });
    assert.equal(created.status, 201, created.text);
    const clientId = String(obj(created.body)['client_id']);

    const { browser, uid } = await openSignIn(h.url, authorizeUrlOf(clientId, 'memory:recall', pkce().challenge));
    const page = await interactionOf(browser, uid);
    assert.deepEqual(page, {
      client: { id: clientId, name: 'Notes App' },
      scopes: [{ name: 'memory:recall', description: 'Search and list memories and banks' }],
      prompt: 'login',
      project_id: project.projectId,
    });
    // Not signed in: the decision is refused.
    const at = `/v1/account/oauth/interactions/${uid}`;
    const anonymous = await browser.json('POST', at, { allow: true, project_id: project.projectId });
    assert.ok(isProblem(anonymous, 401), anonymous.text);
    assert.equal((await signIn(browser, email, PASSWORD)).status, 200);
    const decision = { allow: true, project_id: project.projectId };
    const noCsrf = await browser.json('POST', at, decision, { 'x-csrf-token': '' });
    assert.ok(isProblem(noCsrf, 403, 'csrf_failed'), noCsrf.text);
    // Another project of the same account is not this client's; another account's project is not found.
    const second = await browser.json('POST', '/v1/account/projects', { name: 'Second' });
    assert.equal(second.status, 201, second.text);
    const wrongProject = await browser.json('POST', at, { allow: true, project_id: String(obj(second.body)['id']) });
    assert.ok(isProblem(wrongProject, 403, 'forbidden'), wrongProject.text);
    const stranger = await setupProject(h.url);
    const foreign = await browser.json('POST', at, { allow: true, project_id: stranger.projectId });
    assert.ok(isProblem(foreign, 404, 'not_found'), foreign.text);
    assert.ok(isProblem(await browser.json('POST', at, { allow: true }), 400, 'validation_failed'));
    const unknown = await browser.json('GET', '/v1/account/oauth/interactions/unknown-uid');
    assert.ok(isProblem(unknown, 404, 'interaction_not_found'));

    const denied = await decide(browser, uid, { allow: false });
    assert.equal(denied.origin + denied.pathname, REDIRECT);
    assert.equal(denied.searchParams.get('error'), 'access_denied');
    assert.equal(denied.searchParams.get('state'), 'st4te');
    assert.equal(denied.searchParams.get('code'), null);
    // The answered request is over: it can be neither read nor answered again.
    assert.ok(isProblem(await browser.json('GET', at), 404, 'interaction_not_found'));
  });

  it('rejects malformed token requests and tokens', async () => {
    assert.equal((await token(h.url, { grant_type: 'password', username: 'a', password: 'b' })).status, 400);
    assert.equal((await token(h.url, {})).status, 400);
    for (const bad of ['abc', 'x'.repeat(43), `${'A'.repeat(40)}$$$`]) {
      assert.ok(isProblem(await call(h.url, 'GET', '/v1/me/usage', { token: bad }), 401), bad);
    }
  });

  it('refuses authorization parameters the control plane cannot store (a NUL character) with invalid_request, not 500', async () => {
    const reg = await call(h.url, 'POST', '/oauth/register', {
      body: { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' },
    });
    assert.equal(reg.status, 201, reg.text);
    const clientId = String(obj(reg.body)['client_id']);
    const { challenge } = pkce();
    for (const extra of [{ state: 'a\u0000b' }, { login_hint: 'ada\u0000' }] as Array<Record<string, string>>) {
      const res = await fetch(`${h.url}${authorizeUrlOf(clientId, 'memory:recall', challenge, extra)}`, {
        redirect: 'manual',
      });
      // The redirect back to the client carries the error (RFC 6749 4.1.2.1).
      assert.equal(res.status, 303, `${JSON.stringify(extra)}: ${res.status} ${await res.text()}`);
      const back = new URL(res.headers.get('location') ?? '');
      assert.equal(`${back.origin}${back.pathname}`, REDIRECT);
      assert.equal(back.searchParams.get('error'), 'invalid_request');
      assert.match(back.searchParams.get('error_description') ?? '', /NUL/);
    }
  });

  it("answers paths and methods the OAuth server does not serve with the gateway's own 404 or 405 problem", async () => {
    for (const [method, path] of [
      ['GET', '/oauth/nothing'],
      ['GET', '/oauth/userinfo'],
      ['POST', '/oauth/device/auth'],
    ]) {
      assert.ok(isProblem(await call(h.url, method!, path!), 404, 'not_found'), `${method} ${path}`);
    }
    for (const [method, path] of [
      ['POST', '/oauth/authorize'],
      ['DELETE', '/oauth/register/some-client'],
      ['GET', '/oauth/token'],
    ]) {
      const res = await call(h.url, method!, path!);
      assert.ok(isProblem(res, 405, 'method_not_allowed'), `${method} ${path}: ${res.status} ${res.text}`);
      assert.ok((res.headers.get('allow') ?? '').length > 0);
    }
    // What the server does serve still reaches it.
    assert.equal((await call(h.url, 'GET', '/oauth/jwks')).status, 200);
    assert.equal((await token(h.url, {})).status, 400);
  });
});
