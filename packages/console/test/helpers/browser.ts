// Browser-test helpers: the console built from source into a temporary folder, headless Chromium from the system,
// a watch on each page (console errors, uncaught exceptions, dialogs), axe-core checks and screenshots.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CONSOLE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Screenshots and other artefacts of a run (git-ignored). */
export const OUTPUT_DIR = path.join(CONSOLE_ROOT, 'test-output');
export const CHROMIUM = process.env['MNEMOS_TEST_CHROMIUM'] ?? '/usr/bin/chromium';
export const WIDTHS = [1440, 375] as const;
/** Set to a folder (docs/console) to also write the small screenshots of the walk that docs/console.md shows. */
const DOCS_DIR = process.env['MNEMOS_CONSOLE_DOCS'];
const WALK = new Set([
  'signup',
  'welcome',
  'connect',
  'keys-secret',
  'playground',
  'memory-bank',
  'usage',
  'oauth-consent',
]);

const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Builds the console from its sources into a fresh folder (what the gateway serves in the test). */
export async function buildConsole(): Promise<string> {
  const outDir = await mkdtemp(path.join(tmpdir(), 'mnemos-console-'));
  const { build } = await import('vite');
  await build({ root: CONSOLE_ROOT, logLevel: 'error', build: { outDir, emptyOutDir: true } });
  return outDir;
}

export async function launchChromium(): Promise<Browser> {
  try {
    return await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
  } catch (error) {
    const reason = (error as Error).message.split('\n')[0] ?? '';
    throw new Error(
      `cannot start Chromium at ${CHROMIUM} (${reason}); install it (apt-get install chromium) ` +
        'or set MNEMOS_TEST_CHROMIUM',
    );
  }
}

/** A browser message the test provoked on purpose: a status the test expects from a path it names. */
export interface ExpectedFailure {
  status: number;
  path: string;
}

/** What a page did that a person would notice or that signals a defect. */
export class PageWatch {
  readonly errors: string[] = [];
  readonly dialogs: string[] = [];
  private readonly expected: ExpectedFailure[] = [];

  constructor(page: Page) {
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      const text = message.text();
      const where = message.location().url;
      const status = /status of (\d{3})/.exec(text)?.[1];
      const allowed =
        status !== undefined &&
        this.expected.some((e) => String(e.status) === status && new URL(where).pathname === e.path);
      if (!allowed) this.errors.push(`${text} (${where})`);
    });
    page.on('pageerror', (error) => this.errors.push(`uncaught: ${error.message}`));
    page.on('dialog', (dialog) => {
      this.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
      void dialog.dismiss();
    });
  }

  /** Chromium logs every 4xx answer as a console error; these are the ones a test asks for. */
  expect(status: number, path: string): void {
    this.expected.push({ status, path });
  }

  assertClean(): void {
    assert.deepEqual(this.errors, [], 'no errors in the browser console');
    assert.deepEqual(this.dialogs, [], 'no dialog opened');
  }
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

let axeSource: string | undefined;

/** Runs axe-core in the page; fails on any serious or critical violation. */
export async function assertAccessible(page: Page, name: string): Promise<void> {
  axeSource ??= await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  // Evaluated through the DevTools protocol, which the page's Content-Security-Policy does not govern.
  await page.evaluate(axeSource);
  const violations = (await page.evaluate<unknown>(`axe.run(document, { resultTypes: ['violations'] }).then((r) =>
    r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
      targets: v.nodes.slice(0, 3).map((n) => String(n.target)) })))`)) as AxeViolation[];
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(serious, [], `${name}: no serious or critical accessibility violation`);
}

/** Screenshots of the page at 1440 and 375 px wide (full page), then back to the wide layout. */
export async function screenshots(page: Page, name: string): Promise<void> {
  const dir = path.join(OUTPUT_DIR, 'screens');
  await mkdir(dir, { recursive: true });
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: path.join(dir, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: WIDTHS[0], height: 900 });
}

/** Nothing sticks out sideways at the narrow width (tables scroll inside their own box). */
export async function assertFitsNarrow(page: Page, name: string): Promise<void> {
  await page.setViewportSize({ width: 375, height: 900 });
  // When the page scrolls sideways, the innermost elements past the right edge (outside boxes that scroll on their
  // own, like wide tables), named so that a failure says what to fix.
  const overflowing = (await page.evaluate<unknown>(`(() => {
    const root = document.documentElement;
    if (root.scrollWidth <= root.clientWidth) return [];
    const scrolls = (el) => ['auto', 'scroll', 'hidden'].includes(getComputedStyle(el).overflowX);
    const inScroller = (el) => { for (let p = el.parentElement; p; p = p.parentElement) if (scrolls(p)) return true;
      return false; };
    const wide = [...document.body.querySelectorAll('*')]
      .filter((el) => el.getBoundingClientRect().right > root.clientWidth + 1 && !inScroller(el));
    const named = wide.filter((el) => !wide.some((other) => other !== el && el.contains(other)))
      .slice(0, 5).map((el) => el.tagName.toLowerCase() + (el.className ? '.' + String(el.className) : '')
        + ' ' + Math.round(el.getBoundingClientRect().right) + 'px');
    return named.length > 0 ? named : ['the page is ' + (root.scrollWidth - root.clientWidth) + ' px too wide'];
  })()`)) as string[];
  await page.setViewportSize({ width: WIDTHS[0], height: 900 });
  assert.deepEqual(overflowing, [], `${name}: the page fits 375 px without sideways scrolling`);
}

/** The first screen of a page of the walk, small enough to keep in the repository. */
async function docScreenshot(page: Page, name: string): Promise<void> {
  if (DOCS_DIR === undefined || !WALK.has(name)) return;
  await mkdir(DOCS_DIR, { recursive: true });
  await page.setViewportSize({ width: 1024, height: 640 });
  await page.screenshot({ path: path.join(DOCS_DIR, `${name}.png`) });
  await page.setViewportSize({ width: WIDTHS[0], height: 900 });
}

/** Every check a page gets: accessibility, narrow layout, screenshots. */
export async function checkPage(page: Page, name: string): Promise<void> {
  await screenshots(page, name);
  await docScreenshot(page, name);
  await assertAccessible(page, name);
  await assertFitsNarrow(page, name);
}
