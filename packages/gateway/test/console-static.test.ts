// The gateway serves the built console under /console/ (files, and index.html for the app's own routes) with its
// security headers, redirects / there, and answers 503 saying how to build it when there is no build.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { call, isProblem, obj, startHarness, type Harness } from './helpers.js';
import { authorizeUrlOf, Browser, pkce, REDIRECT } from './oauth-browser.js';

const DEAD_ENGINE = 'http://127.0.0.1:9';
const INDEX =
  '<!doctype html><html><head><script type="module" src="/console/assets/app-3f2a.js"></script></head>' +
  '<body><div id="root"></div></body></html>';
const SCRIPT = 'document.getElementById("root").textContent = "Mnemos console";';

function assertConsoleHeaders(res: { headers: Headers }, what: string): void {
  const csp = res.headers.get('content-security-policy') ?? '';
  assert.match(csp, /(^|; )default-src 'self'(;|$)/, `${what}: ${csp}`);
  assert.match(csp, /frame-ancestors 'none'/, what);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*|https?:/, `${what}: only this origin, no inline scripts`);
  assert.equal(res.headers.get('x-frame-options'), 'DENY', what);
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff', what);
}

describe('console app served by the gateway', () => {
  let h: Harness;
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'mnemos-console-dist-'));
    await mkdir(path.join(dir, 'assets'));
    await writeFile(path.join(dir, 'index.html'), INDEX);
    await writeFile(path.join(dir, 'assets', 'app-3f2a.js'), SCRIPT);
    await writeFile(path.join(dir, '.env'), 'SECRET=1');
    h = await startHarness(DEAD_ENGINE, { GATEWAY_CONSOLE_DIR: dir });
  });
  after(async () => {
    await h.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('redirects / and /console to /console/, which serves the app with its security headers', async () => {
    for (const p of ['/', '/console']) {
      const res = await call(h.url, 'GET', p);
      assert.equal(res.status, 302, p);
      assert.equal(res.headers.get('location'), '/console/', p);
    }
    const page = await call(h.url, 'GET', '/console/');
    assert.equal(page.status, 200);
    assert.equal(page.text, INDEX);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(page.headers.get('cache-control'), 'no-cache');
    assertConsoleHeaders(page, '/console/');
  });

  it("serves built files (assets cached for good) and index.html for the app's routes", async () => {
    const script = await call(h.url, 'GET', '/console/assets/app-3f2a.js');
    assert.equal(script.status, 200);
    assert.equal(script.text, SCRIPT);
    assert.match(script.headers.get('content-type') ?? '', /javascript/);
    assert.match(script.headers.get('cache-control') ?? '', /immutable/);
    assertConsoleHeaders(script, 'asset');
    const routes = [
      '/console/connect',
      '/console/projects/prj_x/keys',
      '/console/oauth/abc?x=1',
      // Bank ids may hold dots and escaped characters: a reload or a shared link of such a page loads the app.
      '/console/p/prj_x/memory/alice%40example.com',
      '/console/p/prj_x/memory/alice.smith',
    ];
    for (const route of routes) {
      const res = await call(h.url, 'GET', route);
      assert.equal(res.status, 200, route);
      assert.equal(res.text, INDEX, route);
      assertConsoleHeaders(res, route);
    }
    for (const gone of ['/console/assets/gone-1234.js', '/console/gone.js']) {
      const missing = await call(h.url, 'GET', gone);
      assert.ok(isProblem(missing, 404, 'not_found'), `${gone}: ${missing.text}`);
    }
    for (const p of ['/console/.env', '/console/%2e%2e/%2e%2e/package.json', '/console/..%2f..%2fpackage.json']) {
      const res = await call(h.url, 'GET', p);
      const what = `${p}: ${res.status} ${res.text.slice(0, 80)}`;
      assert.ok(!res.text.includes('SECRET') && !res.text.includes('"name"'), what);
      assert.ok(res.status === 404 || res.status === 400 || (res.status === 200 && res.text === INDEX), what);
    }
  });

  it('sends the browser of an authorization request to the console page, which loads the app', async () => {
    const client = { client_name: 'App', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' };
    const reg = await call(h.url, 'POST', '/oauth/register', { body: client });
    assert.equal(reg.status, 201, reg.text);
    const browser = new Browser(h.url);
    const start = await browser.go('GET', authorizeUrlOf(String(obj(reg.body)['client_id']), 'mcp', pkce().challenge));
    assert.equal(start.status, 303);
    const page = await browser.go('GET', start.headers.get('location') ?? '');
    assert.equal(page.status, 200);
    assert.equal(await page.text(), INDEX);
  });

  it('keeps the console paths out of the OpenAPI document', async () => {
    const paths = Object.keys(obj(obj((await call(h.url, 'GET', '/openapi.json')).body)['paths']));
    assert.ok(paths.length > 0);
    assert.deepEqual(
      paths.filter((p) => p === '/' || p.startsWith('/console')),
      [],
    );
  });
});

describe('console app not built', () => {
  let h: Harness;
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'mnemos-console-empty-'));
    h = await startHarness(DEAD_ENGINE, { GATEWAY_CONSOLE_DIR: dir });
  });
  after(async () => {
    await h.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers 503 problem+json saying to run npm run build, and the API still works', async () => {
    for (const p of ['/console/', '/console/oauth/abc', '/console/assets/app.js']) {
      const res = await call(h.url, 'GET', p);
      assert.ok(isProblem(res, 503, 'console_not_built'), `${p}: ${res.text}`);
      assert.match(String(obj(res.body)['detail']), /run `npm run build`/);
      assertConsoleHeaders(res, p);
    }
    assert.equal((await call(h.url, 'GET', '/')).headers.get('location'), '/console/');
    assert.equal((await call(h.url, 'GET', '/health/live')).status, 200);
  });

  it('shows a browser a page that says how to build the console, not JSON', async () => {
    const res = await fetch(`${h.url}/console/`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    const text = await res.text();
    assert.equal(res.status, 503);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(text, /<h1>The console is not built<\/h1>/);
    assert.match(text, /run `npm run build`/);
  });
});
