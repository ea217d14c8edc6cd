// test-runner: long (started first, so the suite does not wait for it at the end)
// The console's account endpoints over plain HTTP: sign-up (open and closed), sign-in and its throttle, sign-out,
// cookie flags, CSRF, projects of the account, and the /v1/me routes acting on a project through the session cookie.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Sessions } from '../src/account/sessions.js';
import { dayOfWrite } from '../src/usage-daily.js';
import { createPool, migrate } from '../src/db.js';
import { Store } from '../src/store.js';
import {
  ADMIN_TOKEN,
  call,
  createTestDatabase,
  isProblem,
  obj,
  setupProject,
  startHarness,
  startTestEngine,
  type EngineHandle,
  type Harness,
  type Json,
} from './helpers.js';
import { Browser, PASSWORD } from './oauth-browser.js';

const DEAD_ENGINE = 'http://127.0.0.1:9';
const SESSION = 'mnemos_session';
const newEmail = (): string => `c${randomBytes(4).toString('hex')}@example.com`;

/** Signs a new account up through the console endpoint; the browser keeps the cookie and the CSRF token. */
async function signUp(
  base: string,
  email = newEmail(),
): Promise<{ browser: Browser; accountId: string; email: string }> {
  const browser = new Browser(base);
  const res = await browser.json('POST', '/v1/account/signup', { email, password: PASSWORD });
  assert.equal(res.status, 201, res.text);
  const body = obj(res.body);
  browser.csrf = String(body['csrf_token']);
  return { browser, accountId: String(obj(body['account'])['id']), email };
}

async function firstProject(browser: Browser, name = 'First'): Promise<string> {
  const res = await browser.json('POST', '/v1/account/projects', { name });
  assert.equal(res.status, 201, res.text);
  return String(obj(res.body)['id']);
}

const sessionCookie = (res: { headers: Headers }): string =>
  res.headers.getSetCookie().find((c) => c.startsWith(`${SESSION}=`)) ?? '';

describe('console account endpoints', () => {
  let engine: EngineHandle;
  let h: Harness;
  before(async () => {
    engine = await startTestEngine();
    h = await startHarness(engine.url, {
      GATEWAY_SIGNIN_MAX_FAILURES_PER_ACCOUNT: '2',
      GATEWAY_SIGNIN_MAX_FAILURES_PER_ADDRESS: '1000',
      // This file signs many accounts up from one address; the sign-up throttle has its own gateway below.
      GATEWAY_SIGNUP_MAX_PER_ADDRESS: '1000',
      GATEWAY_SIGNUP_MAX_TOTAL: '1000',
    });
  });
  after(async () => {
    await h.close();
    await engine.close();
  });

  it('signs up with a session cookie (HttpOnly, SameSite=Lax, Path=/, not Secure over http)', async () => {
    const browser = new Browser(h.url);
    const email = newEmail();
    const res = await browser.json('POST', '/v1/account/signup', { email, password: PASSWORD });
    assert.equal(res.status, 201, res.text);
    const body = obj(res.body);
    assert.equal(obj(body['account'])['email'], email);
    assert.match(String(obj(body['account'])['id']), /^acc_/);
    assert.ok(String(body['csrf_token']).length >= 20);
    const cookie = sessionCookie(res);
    assert.match(cookie, /; HttpOnly/i);
    assert.match(cookie, /; SameSite=Lax/i);
    assert.match(cookie, /; Path=\//i);
    assert.match(cookie, /; Max-Age=\d+/i);
    assert.doesNotMatch(cookie, /; Secure/i);

    const me = await browser.json('GET', '/v1/account/session');
    assert.equal(me.status, 200, me.text);
    assert.deepEqual(obj(me.body), body);
    // The account signs in again with the password it chose.
    const again = await new Browser(h.url).json('POST', '/v1/account/session', {
      email: email.toUpperCase(),
      password: PASSWORD,
    });
    assert.equal(again.status, 200, again.text);
    assert.notEqual(obj(again.body)['csrf_token'], body['csrf_token'], 'each session has its own CSRF token');
    // Signing in again in the same browser replaces its session: the previous token stops working.
    const before = browser.cookie(SESSION) ?? '';
    assert.equal((await browser.json('POST', '/v1/account/session', { email, password: PASSWORD })).status, 200);
    assert.notEqual(browser.cookie(SESSION), before);
    const stale = new Browser(h.url);
    stale.setCookie(SESSION, before);
    assert.ok(isProblem(await stale.json('GET', '/v1/account/session'), 401));
    assert.equal((await browser.json('GET', '/v1/account/session')).status, 200);
  });

  it('refuses a taken email (409), a weak password naming the rule (400) and a malformed email (400)', async () => {
    const { email } = await signUp(h.url);
    const taken = await new Browser(h.url).json('POST', '/v1/account/signup', { email, password: PASSWORD });
    assert.ok(isProblem(taken, 409, 'account_exists'), taken.text);
    assert.equal(sessionCookie(taken), '', 'no session for a refused sign-up');

    const short = await new Browser(h.url).json('POST', '/v1/account/signup', { email: newEmail(), password: 'short' });
    assert.ok(isProblem(short, 400, 'weak_password'), short.text);
    assert.match(String(obj(short.body)['detail']), /at least 10 characters/);
    // Characters as a person counts them: nine thumbs with a skin tone are nine, though 36 UTF-16 units.
    const thumbs = await new Browser(h.url).json('POST', '/v1/account/signup', {
      email: newEmail(),
      password: '\u{1F44D}\u{1F3FD}'.repeat(9),
    });
    assert.ok(isProblem(thumbs, 400, 'weak_password'), thumbs.text);
    const same = newEmail();
    const asEmail = await new Browser(h.url).json('POST', '/v1/account/signup', { email: same, password: same });
    assert.ok(isProblem(asEmail, 400, 'weak_password'), asEmail.text);
    assert.match(String(obj(asEmail.body)['detail']), /^The password is the email address; /);
    // The refused sign-ups created no account: the email signs up afterwards.
    await signUp(h.url, same);

    const malformed = [
      { email: 'not-an-email', password: PASSWORD },
      { email: newEmail() },
      { email: newEmail(), password: PASSWORD, admin: true },
    ];
    for (const body of malformed) {
      const res = await new Browser(h.url).json('POST', '/v1/account/signup', body);
      assert.ok(isProblem(res, 400, 'validation_failed'), res.text);
    }
  });

  it('refuses a password of blanks or a common password, in one line naming what is accepted', async () => {
    const rule =
      'choose one of at least 10 characters that is not only blanks, not a commonly used password and not the ' +
      'email address.';
    const refusals: Array<[string, string]> = [
      [' '.repeat(10), 'The password is only blank characters; '],
      ['\t \u00a0\u3000\u200b      ', 'The password is only blank characters; '],
      ['password123', 'The password is a commonly used password, among the first an attacker tries; '],
      ['QWERTYUIOP', 'The password is a commonly used password, among the first an attacker tries; '],
      [' 1234567890 ', 'The password is a commonly used password, among the first an attacker tries; '],
      ['short', 'The password is too short; '],
    ];
    for (const [password, what] of refusals) {
      const email = newEmail();
      const res = await new Browser(h.url).json('POST', '/v1/account/signup', { email, password });
      assert.ok(isProblem(res, 400, 'weak_password'), `${JSON.stringify(password)}: ${res.text}`);
      const detail = String(obj(res.body)['detail']);
      assert.equal(detail, `${what}${rule}`, JSON.stringify(password));
      assert.deepEqual(obj(res.body)['errors'], [{ pointer: '/password', detail }]);
      assert.equal(sessionCookie(res), '');
      const signIn = await new Browser(h.url).json('POST', '/v1/account/session', { email, password });
      assert.ok(isProblem(signIn, 401), 'the refused sign-up created no account');
    }
    // Blanks inside a password of other characters are fine: a passphrase is the recommended form.
    const passphrase = await new Browser(h.url).json('POST', '/v1/account/signup', {
      email: newEmail(),
      password: 'tea  kettle  moon',
    });
    assert.equal(passphrase.status, 201, passphrase.text);
  });

  it('holds the admin API to the same password rule when it sets an account password', async () => {
    const admin = (password: string) =>
      call(h.url, 'POST', '/admin/accounts', { token: ADMIN_TOKEN, body: { email: newEmail(), password } });
    for (const password of [' '.repeat(12), 'password123', 'short']) {
      const res = await admin(password);
      assert.ok(isProblem(res, 400, 'weak_password'), `${JSON.stringify(password)}: ${res.text}`);
    }
    assert.equal((await admin('tea kettle moon')).status, 201);
  });

  it('refuses a wrong password (401 invalid_credentials), then throttles the account (429, Retry-After)', async () => {
    const { email } = await signUp(h.url);
    const browser = new Browser(h.url);
    const signIn = (password: string): Promise<{ status: number; headers: Headers; text: string; body: unknown }> =>
      browser.json('POST', '/v1/account/session', { email, password });
    const wrong = await signIn('wrong password 1');
    assert.ok(isProblem(wrong, 401, 'invalid_credentials'), wrong.text);
    assert.equal(obj(wrong.body)['detail'], 'Wrong email or password.');
    assert.equal(sessionCookie(wrong), '');
    assert.ok(isProblem(await signIn('wrong password 2'), 401, 'invalid_credentials'));
    const paused = await signIn(PASSWORD);
    assert.ok(isProblem(paused, 429), paused.text);
    const retryAfter = Number(paused.headers.get('retry-after'));
    assert.ok(retryAfter > 0 && retryAfter <= 900, String(retryAfter));
    assert.match(String(obj(paused.body)['detail']), /Try again in \d+ minutes? \(at \d\d:\d\d UTC\)/);
    assert.equal(sessionCookie(paused), '', 'a paused account gets no session even with the right password');
    // An unknown account is refused the same way as a wrong password.
    const nobody = await browser.json('POST', '/v1/account/session', { email: newEmail(), password: PASSWORD });
    assert.ok(isProblem(nobody, 401, 'invalid_credentials'));
  });

  it('signs out: the cookie is cleared and the session no longer works anywhere', async () => {
    const { browser } = await signUp(h.url);
    const token = browser.cookie(SESSION) ?? '';
    assert.ok(token.length > 0);
    const noCsrf = await browser.json('DELETE', '/v1/account/session', undefined, { 'x-csrf-token': '' });
    assert.ok(isProblem(noCsrf, 403, 'csrf_failed'), noCsrf.text);
    assert.equal((await browser.json('GET', '/v1/account/session')).status, 200, 'a refused sign-out changes nothing');

    const out = await browser.json('DELETE', '/v1/account/session');
    assert.equal(out.status, 204, out.text);
    assert.match(sessionCookie(out), /Expires=Thu, 01 Jan 1970/i);
    assert.equal(browser.cookie(SESSION), undefined);
    // The old cookie, kept by someone else, is dead on the server too.
    const copy = new Browser(h.url);
    copy.setCookie(SESSION, token);
    assert.ok(isProblem(await copy.json('GET', '/v1/account/session'), 401, 'unauthorized'));
    assert.ok(isProblem(await copy.json('GET', '/v1/account/projects'), 401));
  });

  it('refuses a state-changing cookie call without the right X-CSRF-Token (403 csrf_failed)', async () => {
    const { browser } = await signUp(h.url);
    const projectId = await firstProject(browser);
    for (const headers of [{ 'x-csrf-token': '' }, { 'x-csrf-token': 'wrong-token' }]) {
      const created = await browser.json('POST', '/v1/account/projects', { name: 'Sneaky' }, headers);
      assert.ok(isProblem(created, 403, 'csrf_failed'), created.text);
      const renamed = await browser.json('PATCH', `/v1/account/projects/${projectId}`, { name: 'Sneaky' }, headers);
      assert.ok(isProblem(renamed, 403, 'csrf_failed'), renamed.text);
      const key = await browser.json(
        'POST',
        '/v1/me/keys',
        { name: 'sneaky' },
        { ...headers, 'x-mnemos-project': projectId },
      );
      assert.ok(isProblem(key, 403, 'csrf_failed'), key.text);
    }
    const projects = await browser.json('GET', '/v1/account/projects');
    assert.deepEqual(
      (obj(projects.body)['projects'] as Json[]).map((p) => p['name']),
      ['First'],
    );
    const keys = await browser.json('GET', '/v1/me/keys', undefined, { 'x-mnemos-project': projectId });
    assert.deepEqual(obj(keys.body)['items'], []);
    // A Bearer credential is not affected by the cookie or the header.
    const { key } = await setupProject(h.url);
    const bearer = await browser.json(
      'POST',
      '/v1/me/keys',
      { name: 'api' },
      { authorization: `Bearer ${key}`, 'x-csrf-token': '' },
    );
    assert.equal(bearer.status, 201, bearer.text);
  });

  it('lists, creates and renames the projects of the signed-in account only', async () => {
    const a = await signUp(h.url);
    const b = await signUp(h.url);
    assert.deepEqual(obj((await a.browser.json('GET', '/v1/account/projects')).body), { projects: [] });
    const created = await a.browser.json('POST', '/v1/account/projects', { name: 'Alpha' });
    assert.equal(created.status, 201, created.text);
    const project = obj(created.body);
    assert.deepEqual(Object.keys(project).sort(), ['created_at', 'id', 'name', 'plan', 'tenant']);
    assert.equal(project['plan'], 'free');
    assert.equal(project['tenant'], project['id']);
    const id = String(project['id']);
    const renamed = await a.browser.json('PATCH', `/v1/account/projects/${id}`, { name: 'Alpha 2' });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(obj(renamed.body)['name'], 'Alpha 2');
    const names = obj((await a.browser.json('GET', '/v1/account/projects')).body)['projects'] as Json[];
    assert.deepEqual(
      names.map((p) => p['name']),
      ['Alpha 2'],
    );
    // Another account neither sees nor renames it.
    assert.deepEqual(obj((await b.browser.json('GET', '/v1/account/projects')).body), { projects: [] });
    const foreign = await b.browser.json('PATCH', `/v1/account/projects/${id}`, { name: 'Mine now' });
    assert.ok(isProblem(foreign, 404, 'not_found'), foreign.text);
    const admin = await call(h.url, 'GET', `/admin/projects/${id}`, { token: ADMIN_TOKEN });
    assert.equal(obj(admin.body)['name'], 'Alpha 2');
    for (const body of [{}, { name: '' }, { name: 'x'.repeat(201) }, { name: 'ok', plan: 'scale' }]) {
      const refused = await a.browser.json('POST', '/v1/account/projects', body);
      assert.ok(isProblem(refused, 400, 'validation_failed'), JSON.stringify(body));
    }
    assert.ok(isProblem(await new Browser(h.url).json('GET', '/v1/account/projects'), 401, 'unauthorized'));
  });

  it('acts on its own project with the session and X-Mnemos-Project: keys, usage, retain and recall', async () => {
    const { browser } = await signUp(h.url);
    const projectId = await firstProject(browser);
    const as = { 'x-mnemos-project': projectId };
    const key = await browser.json('POST', '/v1/me/keys', { name: 'reader', scopes: ['memory:recall'] }, as);
    assert.equal(key.status, 201, key.text);
    const secret = String(obj(key.body)['key']);

    const content = 'The console user grows tomatoes on the balcony.';
    const retained = await browser.json('POST', '/v1/me/banks/notes/memories', { content }, as);
    assert.equal(retained.status, 200, retained.text);
    const recalled = await browser.json('POST', '/v1/me/banks/notes/memories/recall', { query: 'tomatoes' }, as);
    assert.equal(recalled.status, 200, recalled.text);
    assert.match(recalled.text, /tomatoes/);
    // The key made in the console works as an API key, with only its scope.
    const recallAt = '/v1/me/banks/notes/memories/recall';
    assert.equal((await call(h.url, 'POST', recallAt, { token: secret, body: { query: 'tomatoes' } })).status, 200);
    const retainByKey = await call(h.url, 'POST', '/v1/me/banks/notes/memories', {
      token: secret,
      body: { content: 'x' },
    });
    assert.ok(isProblem(retainByKey, 403, 'insufficient_scope'));

    const usage = await browser.json('GET', '/v1/me/usage', undefined, as);
    assert.equal(usage.status, 200, usage.text);
    assert.equal(obj(obj(usage.body)['recalls'])['used'], 2);
    assert.equal(obj(obj(usage.body)['memories'])['used'], 1);
    // The daily series: every day of the month so far, adding up to the month's counts.
    const daily = obj(usage.body)['daily'] as Json[];
    const period = String(obj(usage.body)['period']);
    assert.deepEqual(
      daily.map((d) => d['date']),
      daily.map((_d, i) => `${period}-${String(i + 1).padStart(2, '0')}`),
    );
    for (const metric of ['memories', 'recalls', 'reflects']) {
      const total = daily.reduce((sum, d) => sum + Number(d[metric]), 0);
      assert.equal(total, obj(obj(usage.body)[metric])['used'], metric);
    }
    const listed = await browser.json('GET', '/v1/me/keys', undefined, as);
    assert.deepEqual(
      (obj(listed.body)['items'] as Json[]).map((k) => k['name']),
      ['reader'],
    );
    const revoked = await browser.json('DELETE', `/v1/me/keys/${String(obj(key.body)['id'])}`, undefined, as);
    assert.equal(revoked.status, 200, revoked.text);
    assert.ok(isProblem(await call(h.url, 'POST', recallAt, { token: secret, body: { query: 'q' } }), 401));
  });

  it("refuses another account's project (404), a missing project header (400) and no session (401)", async () => {
    const { browser } = await signUp(h.url);
    await firstProject(browser);
    const other = await setupProject(h.url);
    const foreign = await browser.json('GET', '/v1/me/usage', undefined, { 'x-mnemos-project': other.projectId });
    assert.ok(isProblem(foreign, 404, 'not_found'), foreign.text);
    const retain = await browser.json(
      'POST',
      '/v1/me/banks/b/memories',
      { content: 'into a foreign project' },
      { 'x-mnemos-project': other.projectId },
    );
    assert.ok(isProblem(retain, 404, 'not_found'), retain.text);
    const otherMemories = await call(h.url, 'GET', '/v1/me/banks/b/memories', { token: other.key });
    assert.doesNotMatch(otherMemories.text, /foreign project/);
    for (const bad of ['', 'prj_unknown', '../x', 'x'.repeat(80)]) {
      const res = await browser.json('GET', '/v1/me/usage', undefined, { 'x-mnemos-project': bad });
      assert.ok(isProblem(res, bad === '' ? 400 : 404), `${bad}: ${res.text}`);
    }
    assert.ok(isProblem(await browser.json('GET', '/v1/me/usage'), 400, 'project_required'));
    const anonymous = new Browser(h.url);
    anonymous.setCookie(SESSION, 'A'.repeat(43));
    const unknownSession = await anonymous.json('GET', '/v1/me/usage', undefined, {
      'x-mnemos-project': other.projectId,
    });
    assert.ok(isProblem(unknownSession, 401));
  });

  it('documents the account paths and the console security scheme in the OpenAPI document', async () => {
    const doc = obj((await call(h.url, 'GET', '/openapi.json')).body);
    const paths = obj(doc['paths']);
    const account = ['/v1/account/signup', '/v1/account/session', '/v1/account/projects', '/v1/account/projects/{id}'];
    for (const p of account) {
      assert.ok(p in paths, p);
    }
    const schemes = obj(obj(doc['components'])['securitySchemes']);
    assert.deepEqual(obj(schemes['consoleSession'])['in'], 'cookie');
    assert.deepEqual(obj(schemes['consoleProject'])['name'], 'X-Mnemos-Project');
    const usage = obj(obj(paths['/v1/me/usage'])['get']);
    const console = { consoleSession: [], consoleProject: [] };
    assert.deepEqual(usage['security'], [{ oauth2: ['project:read'] }, { apiKey: [] }, console]);
  });
});

describe('console sign-up throttle', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness(DEAD_ENGINE, {
      GATEWAY_TRUST_PROXY: 'true',
      GATEWAY_SIGNUP_MAX_PER_ADDRESS: '2',
      GATEWAY_SIGNUP_MAX_TOTAL: '3',
    });
  });
  after(async () => {
    await h.close();
  });

  const signUpFrom = (address: string, email = newEmail()) =>
    call(h.url, 'POST', '/v1/account/signup', {
      body: { email, password: PASSWORD },
      headers: { 'x-forwarded-for': address },
    });
  const assertThrottled = async (res: Awaited<ReturnType<typeof signUpFrom>>, detail: RegExp): Promise<void> => {
    assert.ok(isProblem(res, 429, 'rate_limited'), res.text);
    const retryAfter = Number(res.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 3600, String(retryAfter));
    assert.equal(obj(res.body)['retry_after'], retryAfter);
    assert.match(String(obj(res.body)['detail']), detail);
    assert.equal(sessionCookie(res), '');
  };

  it('creates the allowance per address, then answers 429 with Retry-After, per address and in all', async () => {
    for (let i = 0; i < 2; i++) assert.equal((await signUpFrom('203.0.113.1')).status, 201);
    const email = newEmail();
    await assertThrottled(
      await signUpFrom('203.0.113.1', email),
      /^Too many sign-ups from this address \(2 per hour\)/,
    );
    const none = await call(h.url, 'POST', '/v1/account/session', { body: { email, password: PASSWORD } });
    assert.ok(isProblem(none, 401), 'the throttled sign-up created no account');
    // Another address has its own allowance, until everyone together has used the total.
    assert.equal((await signUpFrom('203.0.113.2')).status, 201);
    await assertThrottled(
      await signUpFrom('203.0.113.3'),
      /^This server takes at most 3 sign-ups per hour from everyone/,
    );
    // A refused password is not a sign-up: it is answered for what it is and spends no allowance.
    const weak = await call(h.url, 'POST', '/v1/account/signup', {
      body: { email: newEmail(), password: ' '.repeat(10) },
      headers: { 'x-forwarded-for': '203.0.113.4' },
    });
    assert.ok(isProblem(weak, 400, 'weak_password'), weak.text);
  });
});

describe('console sign-up closed, HTTPS public URL', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness(DEAD_ENGINE, { GATEWAY_SIGNUP: 'closed', GATEWAY_PUBLIC_URL: 'https://mnemos.example.com' });
  });
  after(async () => {
    await h.close();
  });

  it('refuses sign-up (403 signup_closed); accounts from the admin API sign in with a Secure cookie', async () => {
    const email = newEmail();
    const refused = await new Browser(h.url).json('POST', '/v1/account/signup', { email, password: PASSWORD });
    assert.ok(isProblem(refused, 403, 'signup_closed'), refused.text);
    assert.equal(sessionCookie(refused), '');
    const noAccount = await new Browser(h.url).json('POST', '/v1/account/session', { email, password: PASSWORD });
    assert.ok(isProblem(noAccount, 401), 'the refused sign-up created no account');

    await setupProject(h.url, { email, password: PASSWORD });
    const browser = new Browser(h.url);
    const signedIn = await browser.json('POST', '/v1/account/session', { email, password: PASSWORD });
    assert.equal(signedIn.status, 200, signedIn.text);
    const cookie = sessionCookie(signedIn);
    assert.match(cookie, /; Secure/i);
    assert.match(cookie, /; HttpOnly/i);
    assert.match(cookie, /; SameSite=Lax/i);
    browser.csrf = String(obj(signedIn.body)['csrf_token']);
    const out = await browser.json('DELETE', '/v1/account/session');
    assert.equal(out.status, 204);
    assert.match(sessionCookie(out), /; Secure/i);
  });
});

describe('console sessions', () => {
  it('expire after their lifetime and end when revoked', async () => {
    const db = await createTestDatabase();
    const pool = createPool(db.url, 2);
    try {
      await migrate(pool);
      const account = await new Store(pool).createAccount({ email: newEmail() });
      assert.ok(account !== null);
      let now = Date.parse('2030-01-01T00:00:00Z');
      const sessions = new Sessions(pool, 3_600_000, () => now);
      const first = await sessions.create(account.id);
      const second = await sessions.create(account.id);
      assert.equal((await sessions.find(first.token))?.accountId, account.id);
      assert.equal((await sessions.find(first.token))?.csrfToken, first.session.csrfToken);
      now += 3_599_000;
      assert.ok((await sessions.find(first.token)) !== undefined, 'alive just before its end');
      await sessions.revoke(second.token);
      assert.equal(await sessions.find(second.token), undefined, 'revoked');
      now += 1_000;
      assert.equal(await sessions.find(first.token), undefined, 'expired at its end');
      await sessions.prune();
      const left = await pool.query('SELECT count(*)::int AS n FROM account_sessions');
      assert.equal((left.rows[0] as { n?: unknown } | undefined)?.n, 0);
    } finally {
      await pool.end();
      await db.drop();
    }
  });
});

describe('daily usage', () => {
  it('counts units for the day they are written on, or the last day of their month once it has ended', () => {
    assert.equal(dayOfWrite('2030-01', new Date('2030-01-17T23:59:59Z')), '2030-01-17');
    assert.equal(dayOfWrite('2030-01', new Date('2030-02-01T00:00:01Z')), '2030-01-31');
    assert.equal(dayOfWrite('2028-02', new Date('2028-03-01T00:00:00Z')), '2028-02-29');
    assert.equal(dayOfWrite('2030-12', new Date('2031-01-01T00:00:00Z')), '2030-12-31');
  });
});
