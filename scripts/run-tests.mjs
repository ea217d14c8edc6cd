#!/usr/bin/env node
// Runs every *.test.ts under packages/*/test (or the files given) with Node's built-in test runner.
// Sources are loaded through tsx with the "source" export condition, so workspace packages resolve to
// their TypeScript sources and the tests need no separate build step; `npm test` type-checks first.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, existsSync } from 'node:fs';
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
const files = given.length > 0 ? given : readdirSync('packages')
  .map((p) => join('packages', p, 'test'))
  .filter((d) => existsSync(d))
  .flatMap((d) => collect(d, []))
  .sort();

// Test files run in parallel processes. Most of their time is spent waiting (on the model's thread, the database,
// child processes and HTTP), so more files than cores keeps both cores busy; MNEMOS_TEST_CONCURRENCY overrides it.
const concurrency = Number(process.env.MNEMOS_TEST_CONCURRENCY ?? 4);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  const setting = process.env.MNEMOS_TEST_CONCURRENCY;
  console.error(`run-tests: MNEMOS_TEST_CONCURRENCY=${setting} must be a whole number of at least 1.`);
  process.exit(2);
}

// A test file whose process never exits (a thread or handle left open) would hold the runner until CI's own limit;
// 40 minutes is several times the whole suite on a 2-core machine, and the message says what happened.
const LIMIT_MS = 40 * 60 * 1000;
const result = spawnSync(process.execPath, [
  '--conditions=source', '--import', 'tsx', '--test', `--test-concurrency=${concurrency}`,
  '--test-reporter=spec', ...files,
], { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' }, timeout: LIMIT_MS, killSignal: 'SIGKILL' });
if (result.error?.code === 'ETIMEDOUT') {
  console.error(`run-tests: the suite did not finish within ${LIMIT_MS / 60000} minutes (a test file that never exits?); stopped.`);
  process.exit(1);
}
process.exit(result.status ?? 1);
