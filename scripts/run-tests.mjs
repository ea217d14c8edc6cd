#!/usr/bin/env node
// Runs every *.test.ts under packages/*/test (or the files given) with Node's built-in test runner.
// Sources are loaded through tsx with the "source" export condition, so workspace packages resolve to
// their TypeScript sources and the tests need no separate build step; `npm test` type-checks first.
//
// Files run in two phases: most files run several at once, the longest (marked `// test-runner: long`) first; files
// that measure how fast a server answers (they carry the line `// test-runner: alone`) run afterwards one at a time,
// because other files' CPU would blur what they time.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function collect(dir, out) {
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'dist') continue;
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) collect(full, out);
    else if (entry.endsWith('.test.ts')) out.push(full);
  }
  return out;
}

const given = process.argv.slice(2);
const files =
  given.length > 0
    ? given
    : readdirSync('packages')
        .map((p) => join('packages', p, 'test'))
        .filter((d) => existsSync(d))
        .flatMap((d) => collect(d, []))
        .sort();

// Test files run in parallel processes. Most of their time is spent waiting (on the model's thread, the database,
// child processes and HTTP), so more files than cores keeps both cores busy; MNEMOS_TEST_CONCURRENCY overrides it.
const concurrency = Number(process.env.MNEMOS_TEST_CONCURRENCY ?? 4);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error(
    `run-tests: MNEMOS_TEST_CONCURRENCY=${process.env.MNEMOS_TEST_CONCURRENCY} must be a whole number of at least 1.`,
  );
  process.exit(2);
}

const runsAlone = (file) => /^\/\/ test-runner: alone\b/m.test(readFileSync(file, 'utf8'));
// Files run in the order given, as many at once as allowed: the longest ones (marked `// test-runner: long`) start
// first, so the short ones fill the gaps around them instead of one long file running on alone at the end.
const runsLong = (file) => /^\/\/ test-runner: long\b/m.test(readFileSync(file, 'utf8'));
const longFirst = (list) => [...list.filter(runsLong), ...list.filter((f) => !runsLong(f))];
const phases = [
  { files: longFirst(files.filter((f) => !runsAlone(f))), concurrency },
  { files: files.filter(runsAlone), concurrency: 1 },
].filter((phase) => phase.files.length > 0);

// A test file whose process never exits (a thread or handle left open) would hold the runner until CI's own limit;
// 40 minutes is several times the whole suite on a 2-core machine, and the message says what happened.
const LIMIT_MS = 40 * 60 * 1000;
const started = Date.now();
const tapDir = mkdtempSync(join(tmpdir(), 'mnemos-tests-'));
const totals = { pass: 0, fail: 0, cancelled: 0, skipped: 0 };
let status = 0;
for (const [i, phase] of phases.entries()) {
  const tapFile = join(tapDir, `phase-${i}.tap`);
  const result = spawnSync(
    process.execPath,
    [
      '--conditions=source',
      '--import',
      'tsx',
      '--test',
      `--test-concurrency=${phase.concurrency}`,
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      '--test-reporter=tap',
      `--test-reporter-destination=${tapFile}`,
      ...phase.files,
    ],
    {
      stdio: 'inherit',
      env: { ...process.env, NODE_ENV: 'test' },
      timeout: Math.max(1, LIMIT_MS - (Date.now() - started)),
      killSignal: 'SIGKILL',
    },
  );
  if (result.error?.code === 'ETIMEDOUT') {
    console.error(
      `run-tests: the suite did not finish within ${LIMIT_MS / 60000} minutes (a test file that never exits?); stopped.`,
    );
    process.exit(1);
  }
  if (result.status !== 0) status = result.status ?? 1;
  const tap = existsSync(tapFile) ? readFileSync(tapFile, 'utf8') : '';
  for (const key of Object.keys(totals)) {
    totals[key] += Number(new RegExp(`^# ${key} (\\d+)$`, 'm').exec(tap)?.[1] ?? 0);
  }
}
rmSync(tapDir, { recursive: true, force: true });
const failed = totals.fail + totals.cancelled;
const minutes = ((Date.now() - started) / 60000).toFixed(1);
const shape = phases.map((p) =>
  p.concurrency === 1 ? `${p.files.length} alone` : `${p.files.length} up to ${p.concurrency} at once`,
);
console.log(`\nrun-tests: ${files.length} files in ${minutes} min (${shape.join(', then ')})`);
console.log(`tests: ${totals.pass} passed, ${failed} failed, ${totals.skipped} skipped`);
process.exit(status !== 0 || failed > 0 ? status || 1 : 0);
