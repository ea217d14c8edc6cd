// The console in a real browser: headless Chromium drives the built app served by a real gateway (PostgreSQL 15
// control plane) in front of a real engine. Each page is checked with axe-core, at 375 px, and photographed.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import {
  call,
  isProblem,
  obj,
  startHarness,
  startTestEngine,
  type EngineHandle,
  type Harness,
} from '../../gateway/test/helpers.js';
import { basic, pkce, token } from '../../gateway/test/oauth-browser.js';
import { buildConsole, checkPage, launchChromium, OUTPUT_DIR, PageWatch } from './helpers/browser.js';

const EMAIL = `owner-${randomBytes(4).toString('hex')}@example.com`;
const PASSWORD = 'correct horse battery staple';
const BANK = 'my-agent';
const MEMORIES = [
  'Alice prefers green tea over coffee.',
  'Bob is allergic to peanuts.',
  'The quarterly review happens on the first Monday of March.',
];
const HOSTILE = '<img src=x onerror=alert(1)>';
const UI_TIMEOUT_MS = 20_000;

let engine: EngineHandle;
let h: Harness;
let built: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let watch: PageWatch;
let projectId = '';
/** The OAuth client's own page, where the authorization server sends the browser back. */
let callbackServer: Server;
let redirectUri = '';

before(async () => {
  [built, engine] = await Promise.all([buildConsole(), startTestEngine()]);
  h = await startHarness(engine.url, { GATEWAY_CONSOLE_DIR: built });
  callbackServer = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
  redirectUri = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callback`;
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  // Generous for a loaded machine, short enough that one broken step does not hold every later test.
  context.setDefaultTimeout(UI_TIMEOUT_MS);
  page = await context.newPage();
  watch = new PageWatch(page);
});

after(async () => {
  await browser?.close();
  callbackServer?.close();
  await h?.close();
  await engine?.close();
  if (built !== undefined) await rm(built, { recursive: true, force: true });
});

const heading = (p: Page, name: string) => p.getByRole('heading', { level: 1, name });
const nav = async (name: string): Promise<void> => {
  await page
    .getByRole('navigation', { name: /^Project/ })
    .getByRole('link', { name, exact: true })
    .click();
};

/** The signed-in page's own fetch: session cookie and project header, as the console sends them. */
async function pageGet(path: string): Promise<{ status: number; body: unknown }> {
  return page.evaluate(
    async ([url, project]) => {
      const res = await fetch(url, { headers: { 'x-mnemos-project': project } });
      return { status: res.status, body: await res.json() };
    },
    [path, projectId] as const,
  );
}

test('sign up, create the first project, and land on Connect with the base URL', async () => {
  watch.expect(401, '/v1/account/session');
  const signupCalls: string[] = [];
  page.on('request', (r) => {
    if (r.url().endsWith('/v1/account/signup')) signupCalls.push(r.method());
  });

  await page.goto(`${h.url}/`);
  await heading(page, 'Sign in').waitFor();
  assert.match(page.url(), /\/console\/signin/);
  await checkPage(page, 'signin');

  await page.getByRole('link', { name: 'Create an account' }).click();
  await heading(page, 'Create your account').waitFor();
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByText('Enter an email address such as you@example.com.').waitFor();
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill('short');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByText('Use at least 10 characters.').waitFor();
  const rule = page.getByText(
    'At least 10 characters, not only spaces, not a commonly used password and not your email address.',
  );
  assert.ok(await rule.isVisible(), 'the sign-up page shows the password rule');
  await page.getByLabel('Password').fill(' '.repeat(10));
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByText('Use letters, digits or symbols, not only spaces.').waitFor();
  assert.deepEqual(signupCalls, [], 'an invalid form sends nothing');
  await checkPage(page, 'signup');

  // The list of common passwords is the gateway's: its refusal is shown on the form, and no account is made.
  watch.expect(400, '/v1/account/signup');
  await page.getByLabel('Password').fill('password123');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page
    .getByRole('alert')
    .getByText(/^The password is a commonly used password, among the first an attacker tries; choose one of at least/)
    .waitFor();
  assert.deepEqual(signupCalls, ['POST']);
  await heading(page, 'Create your account').waitFor();

  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  await heading(page, 'Create your first project').waitFor();
  await checkPage(page, 'welcome');

  await page.getByLabel('Project name').fill('Support bot');
  await page.getByRole('button', { name: 'Create project' }).click();
  await heading(page, 'Connect').waitFor();
  projectId = /\/console\/p\/([^/]+)\/connect/.exec(page.url())?.[1] ?? '';
  assert.ok(projectId !== '', page.url());
  assert.equal((await page.getByTestId('base-url').innerText()).trim(), h.url);
  const curl = await page.getByTestId('snippet-curl').innerText();
  assert.ok(curl.includes(`${h.url}/v1/me/banks/${BANK}/memories`), curl);
  await page.getByRole('tab', { name: 'TypeScript' }).click();
  assert.ok((await page.getByTestId('snippet-typescript').innerText()).includes(`baseUrl: '${h.url}'`));
  await checkPage(page, 'connect');
});

test('a recall-only key: its secret is shown once, it recalls, cannot retain, and is revoked at once', async () => {
  await nav('API keys');
  await heading(page, 'API keys').waitFor();
  await page.getByLabel('Name').fill('recall only');
  await page.getByRole('checkbox', { name: 'memory:retain' }).uncheck();
  await page.getByRole('checkbox', { name: 'memory:reflect' }).uncheck();
  await page.getByRole('checkbox', { name: 'memory:delete' }).uncheck();
  await page.getByRole('checkbox', { name: 'mcp' }).uncheck();
  assert.ok(await page.getByRole('checkbox', { name: 'memory:recall' }).isChecked());
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByRole('heading', { name: 'Your new key “recall only”' }).waitFor();
  const secret = (await page.getByTestId('secret').innerText()).trim();
  assert.match(secret, /^mnm_live_\w+$/);
  await page.getByText('This secret is shown only once').waitFor();
  await checkPage(page, 'keys-secret');

  await page.reload();
  await heading(page, 'API keys').waitFor();
  await page.getByRole('cell', { name: 'recall only', exact: true }).waitFor();
  assert.ok(!(await page.content()).includes(secret), 'after a reload the secret is gone');

  const recall = await call(h.url, 'POST', `/v1/me/banks/${BANK}/memories/recall`, {
    token: secret,
    body: { query: 'tea' },
  });
  assert.equal(recall.status, 200, recall.text);
  const retain = await call(h.url, 'POST', `/v1/me/banks/${BANK}/memories`, { token: secret, body: { content: 'x' } });
  assert.ok(isProblem(retain, 403, 'insufficient_scope'), retain.text);

  await page.getByRole('button', { name: 'Revoke key recall only' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
  await page.getByRole('cell', { name: 'revoked', exact: true }).waitFor();
  const after = await call(h.url, 'POST', `/v1/me/banks/${BANK}/memories/recall`, {
    token: secret,
    body: { query: 'tea' },
  });
  assert.ok(isProblem(after, 401), after.text);
  await checkPage(page, 'keys');
});

test('the TypeScript snippet from Connect, run with a new key, retains and recalls', async () => {
  await nav('API keys');
  await page.getByLabel('Name').fill('quickstart');
  // The form starts from the API's default scopes, MCP among them, so the Connect page's MCP snippet works with it.
  for (const scope of ['memory:retain', 'memory:recall', 'memory:reflect', 'memory:delete', 'mcp']) {
    assert.ok(await page.getByRole('checkbox', { name: scope }).isChecked(), `${scope} is checked by default`);
  }
  await page.getByRole('button', { name: 'Create key' }).click();
  const secret = (await page.getByTestId('secret').innerText()).trim();
  const initialize = await call(h.url, 'POST', '/mcp', {
    token: secret,
    headers: { accept: 'application/json, text/event-stream' },
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'console-test', version: '1' } },
    },
  });
  assert.equal(initialize.status, 200, initialize.text);
  await page.getByRole('button', { name: 'I have copied it' }).click();
  await nav('Connect');
  await page.getByRole('tab', { name: 'TypeScript' }).click();
  const snippet = await page.getByTestId('snippet-typescript').innerText();

  // Pasted into a file of the workspace, where `@mnemos/client` resolves, and run as a person would run it.
  await mkdir(OUTPUT_DIR, { recursive: true });
  const file = path.join(OUTPUT_DIR, 'quickstart.ts');
  await writeFile(file, snippet);
  const run = await promisify(execFile)(process.execPath, ['--conditions=source', '--import', 'tsx', file], {
    env: { ...process.env, MNEMOS_API_KEY: secret },
    timeout: 120_000,
  });
  assert.ok(run.stdout.includes('Alice prefers green tea over coffee.'), run.stdout + run.stderr);
});

async function retainInPlayground(text: string): Promise<void> {
  await page.getByLabel('Text').fill(text);
  const [res] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith(`/banks/${BANK}/memories`)),
    page.getByRole('button', { name: 'Retain', exact: true }).click(),
  ]);
  assert.equal(res.status(), 200, await res.text());
}

async function recallInPlayground(query: string): Promise<string> {
  await page.getByLabel('Query').fill(query);
  const [res] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith(`/banks/${BANK}/memories/recall`)),
    page.getByRole('button', { name: 'Recall', exact: true }).click(),
  ]);
  assert.equal(res.status(), 200, await res.text());
  const results = page.getByRole('status', { name: 'Recall results' });
  await results.waitFor();
  return results.innerText();
}

test('three memories retained in the playground, found in the browser, one deleted: recall drops it', async () => {
  await nav('Playground');
  await heading(page, 'Playground').waitFor();
  for (const text of MEMORIES) await retainInPlayground(text);
  const found = await recallInPlayground('What does Alice drink?');
  assert.ok(found.includes(MEMORIES[0] ?? ''), found);
  assert.match(found, /score \d\.\d{3} · \w+ \d\.\d{3}/, 'each result shows its score and per-signal scores');

  watch.expect(503, `/v1/me/banks/${BANK}/reflect`);
  await page.getByLabel('Question').fill('What should I offer Alice?');
  await page.getByRole('button', { name: 'Reflect', exact: true }).click();
  await page.getByText('Reflect is not available: this engine has no language model configured').waitFor();
  await checkPage(page, 'playground');

  await nav('Memory');
  await heading(page, 'Memory').waitFor();
  await checkPage(page, 'memory-banks');
  await page.getByRole('link', { name: BANK, exact: true }).click();
  await heading(page, `Bank ${BANK}`).waitFor();
  const list = page.getByRole('list', { name: 'Memories' });
  for (const text of MEMORIES) await list.getByRole('link', { name: text }).waitFor();
  await checkPage(page, 'memory-bank');

  await page.getByLabel('Text').fill('peanuts');
  await page.getByRole('button', { name: 'Filter' }).click();
  await list.getByRole('link', { name: MEMORIES[0] ?? '' }).waitFor({ state: 'detached' });
  await list.getByRole('link', { name: MEMORIES[1] ?? '' }).click();
  await heading(page, 'Memory').waitFor();
  assert.equal(await page.getByTestId('memory-text').innerText(), MEMORIES[1]);
  await checkPage(page, 'memory-record');
  await page.getByRole('button', { name: 'Delete this memory' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete memory' }).click();
  await heading(page, `Bank ${BANK}`).waitFor();
  await list.getByRole('link', { name: MEMORIES[0] ?? '' }).waitFor();
  await list.getByRole('link', { name: MEMORIES[1] ?? '' }).waitFor({ state: 'detached' });

  await nav('Playground');
  const again = await recallInPlayground('Who is allergic to peanuts?');
  assert.ok(!again.includes(MEMORIES[1] ?? ''), again);
  assert.ok(again.includes(MEMORIES[0] ?? '') || again.includes(MEMORIES[2] ?? ''), again);
});

test('the usage page shows the numbers of GET /v1/me/usage', async () => {
  await nav('Usage');
  await heading(page, 'Usage').waitFor();
  await page.getByTestId('used-memories').waitFor();
  const usage = await pageGet('/v1/me/usage');
  assert.equal(usage.status, 200);
  const body = obj(usage.body);
  assert.ok(Number(obj(body['memories'])['used']) >= MEMORIES.length, JSON.stringify(body));
  for (const metric of ['memories', 'recalls', 'reflects']) {
    const counter = obj(body[metric]);
    const shown = async (id: string): Promise<number> =>
      Number((await page.getByTestId(id).innerText()).replace(/[^\d]/g, ''));
    assert.equal(await shown(`used-${metric}`), counter['used'], `${metric} used`);
    assert.equal(await shown(`limit-${metric}`), counter['limit'], `${metric} limit`);
  }
  // The daily series: drawn as a chart, and the same numbers in its table, day by day.
  await page.locator('figure.chart canvas').first().waitFor();
  await page.getByText('Daily counts as a table').click();
  const days = Array.isArray(body['daily']) ? (body['daily'] as unknown[]).map(obj) : [];
  assert.ok(days.length > 0, JSON.stringify(body));
  for (const day of days) {
    const row = page.getByRole('row', { name: new RegExp(`^${String(day['date'])}`) });
    const cells = (await row.innerText()).split(/\s+/).filter((c) => c !== '');
    assert.deepEqual(cells, [day['date'], day['memories'], day['recalls'], day['reflects']].map(String));
  }
  await checkPage(page, 'usage');
});

test('memory text is shown as text: markup in a memory runs nothing', async () => {
  await nav('Playground');
  await retainInPlayground(HOSTILE);
  await nav('Memory');
  await page.getByRole('link', { name: BANK, exact: true }).click();
  const item = page.getByRole('list', { name: 'Memories' }).getByRole('link', { name: HOSTILE });
  await item.waitFor();
  assert.equal(await page.locator('main img').count(), 0, 'no image element was created from the memory');
  await item.click();
  assert.equal(await page.getByTestId('memory-text').innerText(), HOSTILE);
  assert.equal(await page.locator('main img').count(), 0);
  watch.assertClean();
});

/** Retains through the signed-in page (session cookie, CSRF token, project header); answers the first memory id. */
async function retainInPage(bank: string, body: unknown): Promise<string> {
  return page.evaluate(
    async ([project, path, payload]) => {
      const session = (await (await fetch('/v1/account/session')).json()) as { csrf_token: string };
      const res = await fetch(path, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-mnemos-project': project,
          'x-csrf-token': session.csrf_token,
        },
        body: JSON.stringify(payload),
      });
      return ((await res.json()) as { memory_ids?: string[] }).memory_ids?.[0] ?? '';
    },
    [projectId, `/v1/me/banks/${encodeURIComponent(bank)}/memories`, body] as const,
  );
}

test("a memory's page shows its validity, what superseded it, and its history", async () => {
  // A statement and its later update, retained through the same endpoint and credentials the console uses.
  const old = await retainInPage('moves', { content: 'Alice lives in Lisbon.', timestamp: '2023-03-01T00:00:00Z' });
  const current = await retainInPage('moves', {
    content: 'Alice moved to Berlin.',
    timestamp: '2024-06-01T00:00:00Z',
    supersedes: [old],
  });
  assert.ok(old && current, 'both memories were stored');

  await page.goto(`${h.url}/console/p/${projectId}/memory/moves/${old}`);
  await heading(page, 'Memory').waitFor();
  await page.getByTestId('memory-version').nth(1).waitFor();
  assert.equal(await page.getByTestId('valid-from').innerText(), '2023-03-01 00:00 UTC');
  assert.equal(await page.getByTestId('valid-to').innerText(), '2024-06-01 00:00 UTC');
  assert.equal(await page.getByTestId('superseded-by').innerText(), current);
  const versions = await page.getByTestId('memory-version').allInnerTexts();
  assert.deepEqual(
    versions.map((row) => row.split('\t').slice(0, 2)),
    [
      ['1', 'create'],
      ['2', 'supersede'],
    ],
  );
  assert.match(versions[1] ?? '', /2024-06-01 00:00 UTC\tAlice lives in Lisbon\./);
  await checkPage(page, 'memory-history');

  await page.getByTestId('superseded-by').getByRole('link').click();
  await page.getByTestId('memory-text').getByText('Alice moved to Berlin.').waitFor();
  assert.equal(await page.getByTestId('valid-to').innerText(), 'current');
  // The history loads after the record: wait for it before counting its versions.
  await page.getByTestId('memory-version').first().waitFor();
  assert.equal(await page.getByTestId('memory-version').count(), 1);
  watch.assertClean();
});

test('the memories of a bank filter by a metadata value (typed) and by a date range; a bad filter says why', async () => {
  const notes = [
    {
      content: 'Apollo kickoff notes.',
      metadata: { project: 'apollo', priority: 2 },
      timestamp: '2024-02-10T09:00:00Z',
    },
    {
      content: 'Apollo launch review.',
      metadata: { project: 'apollo', priority: 3 },
      timestamp: '2023-11-05T09:00:00Z',
    },
    {
      content: 'Gemini budget draft.',
      metadata: { project: 'gemini', priority: 2 },
      timestamp: '2024-03-01T09:00:00Z',
    },
    { content: 'Gemini priority as text.', metadata: { priority: '2' }, timestamp: '2024-02-20T09:00:00Z' },
  ];
  for (const note of notes) assert.ok(await retainInPage('filtered', note), note.content);

  await page.goto(`${h.url}/console/p/${projectId}/memory/filtered`);
  await heading(page, 'Bank filtered').waitFor();
  const list = page.getByRole('list', { name: 'Memories' });
  const listed = async (expected: string[]): Promise<void> => {
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText(`1–${expected.length} of ${expected.length}`).waitFor();
    assert.deepEqual((await list.getByRole('link').allInnerTexts()).sort(), [...expected].sort());
  };
  await list.getByRole('link', { name: 'Gemini budget draft.' }).waitFor();

  await page.getByLabel('Metadata key').fill('project');
  await page.getByLabel('Metadata value').fill('apollo');
  await listed(['Apollo kickoff notes.', 'Apollo launch review.']);
  await page.getByLabel('From', { exact: true }).fill('2024-01-01');
  await listed(['Apollo kickoff notes.']);

  // 2 is a number: the memory whose priority is the text "2" stays out; "To" includes its whole day.
  await page.getByLabel('Metadata key').fill('priority');
  await page.getByLabel('Metadata value').fill('2');
  await page.getByLabel('To', { exact: true }).fill('2024-03-01');
  await listed(['Apollo kickoff notes.', 'Gemini budget draft.']);
  await list.getByText('happened 2024-03-01 09:00 UTC').waitFor();
  await checkPage(page, 'memory-filter');
  await page.getByLabel('Metadata value').fill('"2"');
  await page.getByLabel('From', { exact: true }).fill('');
  await page.getByLabel('To', { exact: true }).fill('');
  await listed(['Gemini priority as text.']);

  watch.expect(400, '/v1/me/banks/filtered/memories');
  await page.getByLabel('Metadata key').fill('project.');
  await page.getByRole('button', { name: 'Filter' }).click();
  const alert = page.getByRole('alert');
  await alert.getByText('has an empty metadata key').waitFor();
  assert.doesNotMatch(await alert.innerText(), /\n/, 'the problem is one line');
  await page.getByRole('button', { name: 'Clear' }).click();
  await page.getByText('1–4 of 4').waitFor();
  assert.equal(await page.getByRole('alert').count(), 0, 'the problem goes once the filter is cleared');
  watch.assertClean();
});

test('a bank exports to an NDJSON file that imports back: memories still there are skipped, a bad line is named', async () => {
  const bank = 'portable';
  const kept = await retainInPage(bank, { content: 'Priya keeps her passport in the blue folder.' });
  const lost = await retainInPage(bank, { content: 'Priya renews her passport in 2031.' });
  await page.goto(`${h.url}/console/p/${projectId}/memory/${bank}`);
  await heading(page, `Bank ${bank}`).waitFor();
  const list = page.getByRole('list', { name: 'Memories' });
  await list.getByRole('link', { name: 'Priya renews her passport in 2031.' }).waitFor();

  const [saved] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export memories' }).click(),
  ]);
  assert.equal(saved.suggestedFilename(), `${bank}.ndjson`);
  const exported = await readFile(await saved.path(), 'utf8');
  const lines = exported.trim().split('\n');
  assert.deepEqual(lines.map((l) => (JSON.parse(l) as { id: string }).id).sort(), [kept, lost].sort());

  const deleted = await page.evaluate(
    async ([path, project]) => {
      const session = (await (await fetch('/v1/account/session')).json()) as { csrf_token: string };
      const res = await fetch(path, {
        method: 'DELETE',
        headers: { 'x-mnemos-project': project, 'x-csrf-token': session.csrf_token },
      });
      return res.status;
    },
    [`/v1/me/banks/${bank}/memories/${lost}`, projectId] as const,
  );
  assert.equal(deleted, 200);
  await page.reload();
  await list.getByRole('link', { name: 'Priya keeps her passport in the blue folder.' }).waitFor();
  assert.equal(await list.getByRole('link', { name: 'Priya renews her passport in 2031.' }).count(), 0);

  const file = path.join(OUTPUT_DIR, `${bank}-import.ndjson`);
  await writeFile(file, `${exported.trim()}\n{"text": ""}\n`);
  await page.getByLabel('File to import').setInputFiles(file);
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  const status = page.getByRole('status');
  await status.getByText('Imported 1, skipped 1 already here, 1 failed.').waitFor();
  assert.match(await status.getByRole('list', { name: 'Lines not imported' }).innerText(), /^Line 3: /);
  await list.getByRole('link', { name: 'Priya renews her passport in 2031.' }).waitFor();
  await checkPage(page, 'memory-bank-transfer');
});

test('banks search and paginate, the memories of a bank paginate, erasing a bank needs its id typed', async () => {
  // Twenty-five memories in one retain, through the same endpoint and credentials the console uses.
  const stored = await page.evaluate(
    async ([project, items]) => {
      const session = (await (await fetch('/v1/account/session')).json()) as { csrf_token: string };
      const res = await fetch('/v1/me/banks/paged-notes/memories', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-mnemos-project': project,
          'x-csrf-token': session.csrf_token,
        },
        body: JSON.stringify({ items: items.map((content) => ({ content })) }),
      });
      return res.status;
    },
    [projectId, Array.from({ length: 25 }, (_, i) => `Paged note number ${i + 1} about topic ${i * 7}.`)] as const,
  );
  assert.equal(stored, 200);

  await nav('Memory');
  await page.getByRole('link', { name: 'paged-notes', exact: true }).waitFor();
  await page.getByLabel('Search banks').fill('paged');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('link', { name: BANK, exact: true }).waitFor({ state: 'detached' });
  await page.getByRole('link', { name: 'paged-notes', exact: true }).click();
  await heading(page, 'Bank paged-notes').waitFor();
  const pager = page.getByRole('navigation', { name: 'Memories pages' });
  await pager.getByText('1–20 of 25').waitFor();
  await pager.getByRole('button', { name: 'Next' }).click();
  await pager.getByText('21–25 of 25').waitFor();
  assert.equal(await page.getByRole('list', { name: 'Memories' }).getByRole('listitem').count(), 5);

  await page.getByRole('button', { name: 'Erase this bank' }).click();
  const dialog = page.getByRole('dialog');
  const erase = dialog.getByRole('button', { name: 'Erase bank' });
  assert.ok(await erase.isDisabled(), 'erasing waits for the typed bank id');
  await dialog.getByLabel('Type the bank id to confirm').fill('paged');
  assert.ok(await erase.isDisabled());
  await dialog.getByLabel('Type the bank id to confirm').fill('paged-notes');
  await erase.click();
  await heading(page, 'Memory').waitFor();
  await page.getByRole('link', { name: BANK, exact: true }).waitFor();
  assert.equal(await page.getByRole('link', { name: 'paged-notes', exact: true }).count(), 0);
  const gone = await pageGet('/v1/me/banks/paged-notes/memories');
  assert.equal(obj(gone.body)['total'] ?? 0, 0, JSON.stringify(gone.body));
  watch.assertClean();
});

test('a state-changing call without the CSRF token is refused', async () => {
  watch.expect(403, '/v1/account/projects');
  const refused = await page.evaluate(async () => {
    const res = await fetch('/v1/account/projects', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'forged' }),
    });
    return { status: res.status, body: await res.json() };
  });
  assert.equal(refused.status, 403);
  assert.equal(obj(refused.body)['code'], 'csrf_failed');
  await page.goto(`${h.url}/console/projects`);
  await heading(page, 'Projects').waitFor();
  assert.equal(
    await page.getByRole('cell', { name: 'forged', exact: true }).count(),
    0,
    'the refused call created nothing',
  );
  await page.getByRole('button', { name: 'Rename Support bot' }).click();
  await page.getByLabel('New name').fill('Support bot (prod)');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('link', { name: 'Support bot (prod)' }).waitFor();
  await checkPage(page, 'projects');
  watch.assertClean();
});

test('OAuth code + PKCE through the console sign-in and consent pages; deny ends in access_denied', async () => {
  await page.goto(`${h.url}/console/p/${projectId}/oauth-clients`);
  await heading(page, 'OAuth clients').waitFor();
  await page.getByLabel('Name').fill('Notes app');
  await page.getByLabel('Redirect URIs').fill(redirectUri);
  await page.getByRole('checkbox', { name: 'mcp' }).uncheck();
  await page.getByRole('button', { name: 'Create client' }).click();
  const secret = (await page.getByTestId('secret').innerText()).trim();
  const clientId =
    /cli_[A-Za-z0-9_-]+/.exec((await page.getByRole('region').first().getAttribute('aria-label')) ?? '')?.[0] ?? '';
  assert.ok(clientId !== '' && secret !== '', `client ${clientId}`);
  await checkPage(page, 'oauth-clients');

  // A visitor who is not signed in: a second browser context.
  const visitor = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  visitor.setDefaultTimeout(UI_TIMEOUT_MS);
  const p2 = await visitor.newPage();
  const watch2 = new PageWatch(p2);
  watch2.expect(401, '/v1/account/session');
  const { verifier, challenge } = pkce();
  const authorizeUrl = (state: string): string =>
    `${h.url}/oauth/authorize?${new URLSearchParams({
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'memory:recall',
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString()}`;

  await p2.goto(authorizeUrl('deny-1'));
  await heading(p2, 'Sign in').waitFor();
  assert.match(p2.url(), /\/console\/oauth\//);
  await p2.getByText('Sign in to let Notes app use your memory.').waitFor();
  await checkPage(p2, 'oauth-signin');
  await p2.getByLabel('Email').fill(EMAIL);
  await p2.getByLabel('Password').fill('not the password');
  await p2.getByRole('button', { name: 'Sign in' }).click();
  await p2.getByRole('alert').getByText('Wrong email or password.').waitFor();
  // The visitor's projects are still loading when Deny is clicked (a slow connection): denying needs no project.
  const heldProjects: Route[] = [];
  await p2.route('**/v1/account/projects', (route) => {
    heldProjects.push(route);
  });
  await p2.getByLabel('Password').fill(PASSWORD);
  await p2.getByRole('button', { name: 'Sign in' }).click();

  await heading(p2, 'Allow Notes app?').waitFor();
  await p2.getByText('Loading your projects…').waitFor();
  await Promise.all([p2.waitForURL(`${redirectUri}**`), p2.getByRole('button', { name: 'Deny' }).click()]);
  await p2.unroute('**/v1/account/projects');
  for (const route of heldProjects) await route.abort().catch(() => undefined);
  const denied = new URL(p2.url());
  assert.equal(denied.searchParams.get('error'), 'access_denied');
  assert.equal(denied.searchParams.get('state'), 'deny-1');

  // Already signed in, the next request goes straight to consent.
  await p2.goto(authorizeUrl('allow-1'));
  await heading(p2, 'Allow Notes app?').waitFor();
  await p2.getByText('Search and list memories and banks').waitFor();
  await p2.getByRole('option', { name: 'Support bot (prod)' }).waitFor({ state: 'attached' });
  assert.equal(await p2.getByLabel('Project').inputValue(), projectId);
  await checkPage(p2, 'oauth-consent');
  await Promise.all([p2.waitForURL(`${redirectUri}**`), p2.getByRole('button', { name: 'Allow' }).click()]);
  const back = new URL(p2.url());
  assert.equal(back.searchParams.get('state'), 'allow-1');
  const code = back.searchParams.get('code') ?? '';
  const t = await token(
    h.url,
    { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier },
    basic(clientId, secret),
  );
  assert.equal(t.status, 200, JSON.stringify(t.body));
  const access = String(t.body['access_token']);
  const recall = await call(h.url, 'POST', `/v1/me/banks/${BANK}/memories/recall`, {
    token: access,
    body: { query: 'tea' },
  });
  assert.equal(recall.status, 200, recall.text);
  const retain = await call(h.url, 'POST', `/v1/me/banks/${BANK}/memories`, { token: access, body: { content: 'x' } });
  assert.ok(isProblem(retain, 403, 'insufficient_scope'), retain.text);
  const keys = await call(h.url, 'GET', '/v1/me/keys', { token: access });
  assert.ok(isProblem(keys, 403, 'insufficient_scope'), keys.text);
  watch2.assertClean();
  await visitor.close();
});

test('sign out ends the session: project pages send the visitor to sign in', async () => {
  watch.expect(401, '/v1/account/session');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await heading(page, 'Sign in').waitFor();
  await page.goto(`${h.url}/console/p/${projectId}/keys`);
  await heading(page, 'Sign in').waitFor();
  assert.match(page.url(), /next=/);

  // Signing in again with the keyboard alone returns to the page that asked for it.
  await page.keyboard.press('Tab');
  await page.keyboard.type(EMAIL);
  await page.keyboard.press('Tab');
  await page.keyboard.type(PASSWORD);
  await page.keyboard.press('Enter');
  await heading(page, 'API keys').waitFor();
  // A confirmation opened from the keyboard closes with Escape and changes nothing.
  const revoke = page.getByRole('button', { name: 'Revoke key quickstart' });
  await revoke.focus();
  await page.keyboard.press('Enter');
  await page.getByRole('dialog').waitFor();
  await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'hidden' });
  assert.equal(await page.getByRole('cell', { name: 'active', exact: true }).count(), 1);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await heading(page, 'Sign in').waitFor();

  watch.expect(404, '/console/no-such-page');
  await page.goto(`${h.url}/console/no-such-page`);
  await heading(page, 'Page not found').waitFor();
  await checkPage(page, 'not-found');
  watch.assertClean();
});
