#!/usr/bin/env node
// Runs every *.test.ts under packages/*/test (or the files given) with Node's built-in test runner.
// Sources are loaded through tsx with the "source" export condition, so workspace packages resolve to
// their TypeScript sources and the tests need no separate build step; `npm test` type-checks first. When every
// project's build is current (as `npm test` leaves it), the packages' modules load compiled (compiled-sources.mjs).
//
// Files run in two phases: most files run several at once, the longest (marked `// test-runner: long`) first; files
// that measure how fast a server answers (they carry the line `// test-runner: alone`) run afterwards one at a time,
// because other files' CPU would blur what they time. Each file runs in a process of its own; its report is printed
// whole when it ends, with its time, and the run ends with the time per package and the files that took over 30 s.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, statfsSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { solutionBuildState } from '../packages/engine/bin/build-state.mjs';

function collect(dir, out) {
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'dist') continue;
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) collect(full, out);
    else if (entry.endsWith('.test.ts')) out.push(full);
  }
  return out;
}

/**
 * What the tests need from outside the repository, checked before any test runs: a missing model, data set or
 * database would otherwise fail dozens of tests, each with its own stack trace.
 */
async function preflight() {
  const { tsImport } = await import('tsx/esm/api');
  const assets = await tsImport('../packages/engine/bench/test-assets.ts', import.meta.url);
  const missing = [];
  const model = assets.testModelDir();
  if (!existsSync(join(model, 'config.json')))
    missing.push(`MNEMOS_TEST_MODEL (no all-MiniLM-L6-v2 model at ${model})`);
  const locomo = assets.testLocomoDir();
  if (!existsSync(locomo) || !readdirSync(locomo).some((f) => f.endsWith('.json'))) {
    missing.push(`MNEMOS_TEST_LOCOMO (no LoCoMo conversations at ${locomo})`);
  }
  const pgUrl = assets.testPostgresUrl();
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: pgUrl, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    missing.push(`MNEMOS_TEST_PG_URL (cannot reach PostgreSQL at ${pgUrl}: ${error.message})`);
  } finally {
    await client.end().catch(() => undefined);
  }
  if (missing.length > 0) {
    console.error(`run-tests: the tests cannot start; set ${missing.join('; ')}.`);
    process.exit(2);
  }
}
await preflight();

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
// A file slower than this is named with its time at the end, so a slow test shows up in every run's output.
const SLOW_FILE_MS = 30_000;
const started = Date.now();
const tapDir = mkdtempSync(join(tmpdir(), 'mnemos-tests-'));
const totals = { pass: 0, fail: 0, cancelled: 0, skipped: 0 };
const fileTimes = [];
const failures = [];
let status = 0;
let timedOut = false;
const children = new Set();

// Test engines' homes (MNEMOS_TEST_HOMES, see tempHome in the engine's test helpers) go in a folder in memory for the
// run when /dev/shm has room for them: each engine's embedded database is a thousand-odd files copied into its home and
// removed after, and on a disk file system creating and removing files is system CPU, and waiting, in every engine
// start. The folder is removed when the run ends, with whatever a failed test left in it.
const HOMES_ROOM_BYTES = 4 * 1024 ** 3;
function homesInMemory() {
  if (process.env.MNEMOS_TEST_HOMES !== undefined) return undefined;
  try {
    const fs = statfsSync('/dev/shm');
    if (fs.bavail * fs.bsize < HOMES_ROOM_BYTES) return undefined;
    const dir = mkdtempSync('/dev/shm/mnemos-test-homes-');
    // Open to every user as /tmp is: it stands in for the temporary folder, where a test may make a home for an engine
    // it runs as another user.
    chmodSync(dir, 0o1777);
    return dir;
  } catch {
    return undefined;
  }
}
const homesDir = homesInMemory();
const HOMES_ENV = homesDir === undefined ? {} : { MNEMOS_TEST_HOMES: homesDir };
if (homesDir !== undefined) {
  // A run stopped from the terminal leaves no homes in memory behind either.
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      for (const child of children) child.kill('SIGKILL');
      rmSync(homesDir, { recursive: true, force: true });
      process.exit(1);
    });
  }
}

// Each file's process reports the CPU time it and the processes it started used (see test-cpu-time.mjs): on a shared
// or loaded machine wall times vary with the neighbours, CPU time much less, so it is the figure to compare runs by.
const CPU_REPORT = pathToFileURL(join(import.meta.dirname, 'test-cpu-time.mjs')).href;

// With every project's build current (`npm test` builds first), the packages' modules load compiled (see
// compiled-sources.mjs); otherwise from their sources, so an edit since the last build is what the tests run.
const compiled = solutionBuildState(join(import.meta.dirname, '..', 'tsconfig.json')) === 'current';
const COMPILED_SOURCES = compiled
  ? ['--import', pathToFileURL(join(import.meta.dirname, 'compiled-sources.mjs')).href]
  : [];
console.log(
  compiled
    ? 'run-tests: the build is current; the packages run compiled'
    : 'run-tests: the build is missing or older than a source; the packages run from their sources',
);

/** The "user system" seconds a file's process wrote at exit, summed, or undefined when it wrote none. */
function cpuSeconds(cpuFile) {
  if (!existsSync(cpuFile)) return undefined;
  const [user, system] = readFileSync(cpuFile, 'utf8').trim().split(' ').map(Number);
  return Number.isFinite(user) && Number.isFinite(system) ? user + system : undefined;
}

/**
 * Runs one test file in a process of its own, with the spec report kept until it ends (so files running side by side
 * never interleave their lines) and a TAP report for the totals. Resolves with the file's wall time.
 */
function runFile(file, index) {
  const tapFile = join(tapDir, `file-${index}.tap`);
  const cpuFile = join(tapDir, `file-${index}.cpu`);
  const fileStarted = Date.now();
  const child = spawn(
    process.execPath,
    [
      '--conditions=source',
      '--import',
      'tsx',
      ...COMPILED_SOURCES,
      '--import',
      CPU_REPORT,
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      '--test-reporter=tap',
      `--test-reporter-destination=${tapFile}`,
      file,
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...HOMES_ENV, NODE_ENV: 'test', MNEMOS_TEST_CPU_FILE: cpuFile },
    },
  );
  children.add(child);
  const output = [];
  child.stdout.on('data', (chunk) => output.push(chunk));
  child.stderr.on('data', (chunk) => output.push(chunk));
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      children.delete(child);
      const ms = Date.now() - fileStarted;
      const cpu = cpuSeconds(cpuFile);
      const cpuNote = cpu === undefined ? '' : `, CPU ${cpu.toFixed(1)} s`;
      process.stdout.write(`\n▶ ${file} (${(ms / 1000).toFixed(1)} s${cpuNote})\n`);
      process.stdout.write(Buffer.concat(output));
      if (code !== 0) {
        status = status || code || 1;
        if (signal && !timedOut) process.stdout.write(`run-tests: ${file} was stopped by ${signal}\n`);
      }
      const tap = existsSync(tapFile) ? readFileSync(tapFile, 'utf8') : '';
      for (const key of Object.keys(totals)) {
        totals[key] += Number(new RegExp(`^# ${key} (\\d+)$`, 'm').exec(tap)?.[1] ?? 0);
      }
      // A file that crashed before its report was written counts as one failure, not as nothing.
      if (code !== 0 && !/^# fail \d+$/m.test(tap)) totals.fail += 1;
      failures.push(...failedTests(tap).map((failure) => ({ file, ...failure })));
      if (code !== 0 && failures.every((f) => f.file !== file)) {
        failures.push({
          file,
          name: '(the file itself)',
          error: signal ? `stopped by ${signal}` : `exited with ${code}`,
        });
      }
      fileTimes.push({ file, ms, cpu });
      resolve();
    });
  });
}

/**
 * The failed tests in a file's TAP report, each with the first lines of its error. A parent whose only failure is
 * its subtests' is left out: the subtests name the cause.
 */
function failedTests(tap) {
  const lines = tap.split('\n');
  const found = [];
  for (let i = 0; i < lines.length; i += 1) {
    const head = /^(\s*)not ok \d+ - (.*)$/.exec(lines[i]);
    if (!head) continue;
    const indent = head[1].length + 2;
    const block = [];
    for (let j = i + 1; j < lines.length && !/^\s*\.\.\.$/.test(lines[j]); j += 1) block.push(lines[j]);
    if (block.some((line) => /failureType: 'subtestsFailed'/.test(line))) continue;
    const at = block.findIndex((line) => /^\s*error: /.test(line));
    let error = at < 0 ? '' : block[at].replace(/^\s*error: /, '');
    if (/^[|>]-?$/.test(error)) {
      const body = [];
      const deeper = (line) => line.trim() === '' || /^\s*/.exec(line)[0].length > indent;
      for (let k = at + 1; k < block.length && deeper(block[k]); k += 1) {
        if (block[k].trim() !== '') body.push(block[k].trim());
      }
      error = body.slice(0, 6).join('\n      ');
    }
    found.push({ name: head[2], error });
  }
  return found;
}

async function runPhase(phase, offset) {
  const queue = phase.files.map((file, i) => ({ file, index: offset + i }));
  const worker = async () => {
    for (let next = queue.shift(); next && !timedOut; next = queue.shift()) await runFile(next.file, next.index);
  };
  await Promise.all(Array.from({ length: Math.min(phase.concurrency, queue.length) }, worker));
}

const limit = setTimeout(() => {
  timedOut = true;
  console.error(
    `run-tests: the suite did not finish within ${LIMIT_MS / 60000} minutes (a test file that never exits?); stopped.`,
  );
  for (const child of children) child.kill('SIGKILL');
}, LIMIT_MS);

let offset = 0;
for (const phase of phases) {
  await runPhase(phase, offset);
  offset += phase.files.length;
}
clearTimeout(limit);
rmSync(tapDir, { recursive: true, force: true });
if (homesDir !== undefined) rmSync(homesDir, { recursive: true, force: true });
if (timedOut) process.exit(1);

const failed = totals.fail + totals.cancelled;
const minutes = ((Date.now() - started) / 60000).toFixed(1);
const shape = phases.map((p) =>
  p.concurrency === 1 ? `${p.files.length} alone` : `${p.files.length} up to ${p.concurrency} at once`,
);
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const cpuNote = (cpu) => (cpu === undefined ? '' : `, CPU ${seconds(cpu * 1000)}`);
const byPackage = new Map();
for (const { file, ms, cpu } of fileTimes) {
  const name = /packages\/([^/]+)\//.exec(file)?.[1] ?? 'other';
  const sum = byPackage.get(name) ?? { ms: 0, cpu: undefined };
  byPackage.set(name, { ms: sum.ms + ms, cpu: cpu === undefined ? sum.cpu : (sum.cpu ?? 0) + cpu });
}
console.log('\nrun-tests: time per package (the sum of its files, which run side by side):');
for (const [name, sum] of [...byPackage].sort((a, b) => b[1].ms - a[1].ms)) {
  console.log(`  ${name}: ${seconds(sum.ms)}${cpuNote(sum.cpu)}`);
}
const slow = fileTimes.filter((t) => t.ms > SLOW_FILE_MS).sort((a, b) => b.ms - a.ms);
if (slow.length > 0) {
  console.log(`run-tests: files over ${SLOW_FILE_MS / 1000} s:`);
  for (const { file, ms, cpu } of slow) console.log(`  ${file}: ${seconds(ms)}${cpuNote(cpu)}`);
}
const measured = fileTimes.filter((t) => t.cpu !== undefined);
if (measured.length > 0) {
  const total = measured.reduce((sum, t) => sum + t.cpu, 0);
  console.log(`run-tests: CPU time of the test files: ${(total / 60).toFixed(1)} min (user + system, with children)`);
}
// Failures are repeated last, where a log cut to its tail still shows them.
if (failures.length > 0) {
  console.log('\nrun-tests: failed tests:');
  for (const { file, name, error } of failures) console.log(`  ${file}: ${name}\n      ${error}`);
}
console.log(`\nrun-tests: ${files.length} files in ${minutes} min (${shape.join(', then ')})`);
console.log(`tests: ${totals.pass} passed, ${failed} failed, ${totals.skipped} skipped`);
process.exit(status !== 0 || failed > 0 ? status || 1 : 0);
