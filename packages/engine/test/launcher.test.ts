// The `mnemos` command as installed by `npm ci`: the committed launcher (bin/mnemos.mjs) linked into node_modules/.bin,
// and the build-state check that decides whether it compiles first.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { projectBuildState, referencedProjects, solutionBuildState } from '../bin/build-state.mjs';
import { REPO_ROOT, tempHome, testEnv } from './helpers/engine.js';
import { startFakeEmbeddingServer } from './helpers/fake-embeddings.js';

const run = promisify(execFile);

/** Sets a file's modification time to `seconds` after the epoch, so the order of edits is explicit, not a race. */
function stamp(file: string, seconds: number): void {
  utimesSync(file, seconds, seconds);
}

/** A project folder as tsc -b sees it: tsconfig.json, package.json and sources (one nested). */
function makeProject(root: string, name: string): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'src', 'nested'), { recursive: true });
  for (const f of ['tsconfig.json', 'package.json', 'src/a.ts', 'src/nested/b.ts']) {
    writeFileSync(join(dir, f), '{}');
    stamp(join(dir, f), 1_000);
  }
  return dir;
}

function markBuilt(dir: string, seconds: number): void {
  mkdirSync(join(dir, 'dist'), { recursive: true });
  writeFileSync(join(dir, 'dist', '.tsbuildinfo'), '{}');
  stamp(join(dir, 'dist', '.tsbuildinfo'), seconds);
}

describe('the launcher decides whether to build', () => {
  it('builds before the first build, after a source or setting changes, and not otherwise', () => {
    const home = tempHome('mnemos-launcher-');
    try {
      const dir = makeProject(home.path, 'p');
      assert.equal(projectBuildState(dir), 'missing');
      markBuilt(dir, 2_000);
      assert.equal(projectBuildState(dir), 'current');
      stamp(join(dir, 'src', 'nested', 'b.ts'), 3_000);
      assert.equal(projectBuildState(dir), 'stale', 'a nested source edited after the build');
      markBuilt(dir, 4_000);
      stamp(join(dir, 'tsconfig.json'), 5_000);
      assert.equal(projectBuildState(dir), 'stale', 'tsconfig.json edited after the build');
      markBuilt(dir, 6_000);
      stamp(join(dir, 'package.json'), 7_000);
      assert.equal(projectBuildState(dir), 'stale', 'package.json edited after the build');
    } finally {
      home.remove();
    }
  });

  it('takes a solution as missing if any project was never built, stale if any changed', () => {
    const home = tempHome('mnemos-launcher-');
    try {
      const one = makeProject(home.path, 'one');
      const two = makeProject(home.path, 'two');
      const solution = join(home.path, 'tsconfig.json');
      writeFileSync(solution, JSON.stringify({ files: [], references: [{ path: 'one' }, { path: './two' }] }));
      assert.deepEqual(referencedProjects(solution), [one, two]);
      markBuilt(one, 2_000);
      assert.equal(solutionBuildState(solution), 'missing');
      markBuilt(two, 2_000);
      assert.equal(solutionBuildState(solution), 'current');
      stamp(join(two, 'src', 'a.ts'), 3_000);
      assert.equal(solutionBuildState(solution), 'stale');
    } finally {
      home.remove();
    }
  });
});

describe('node_modules/.bin/mnemos', () => {
  it('exists after npm ci, prints usage, and leaves a current build that the next start does not rebuild', async () => {
    const bin = join(REPO_ROOT, 'node_modules', '.bin', 'mnemos');
    // A build here (only when the sources changed since the last one) is slow on a loaded machine.
    const first = await run(bin, ['help'], { cwd: REPO_ROOT, timeout: 300_000 });
    assert.match(first.stdout, /^usage: mnemos <command>/);
    assert.match(first.stderr, /^(building mnemos \([^)]+\)\.\.\.\n)?$/);
    assert.equal(solutionBuildState(join(REPO_ROOT, 'tsconfig.json')), 'current');
    const second = await run(bin, ['help'], { cwd: REPO_ROOT, timeout: 60_000 });
    assert.match(second.stdout, /^usage: mnemos <command>/);
    assert.equal(second.stderr, '', 'an up-to-date start prints nothing before the command');
  });
});

/** Whether anything still answers HTTP at `url`. */
async function answers(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/health/live`);
    return true;
  } catch {
    return false;
  }
}

/** True once `url` refuses connections (the process behind it is gone), false if it still answers after `ms`. */
async function closedWithin(url: string, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    if (!(await answers(url))) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return !(await answers(url));
}

describe('npm start', () => {
  it('runs the engine in the process npm started, so stopping npm start stops it', { timeout: 300_000 }, async () => {
    // Embeddings from a local fake server: this is about processes and signals, not the model.
    const fake = await startFakeEmbeddingServer(8);
    const home = tempHome('mnemos-launcher-');
    const env = testEnv(home.path, {
      MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: '',
      MNEMOS_API_EMBEDDINGS_LITELLM_MODEL: 'fake',
      MNEMOS_API_EMBEDDINGS_LITELLM_API_BASE: fake.url,
      MNEMOS_API_LOG_LEVEL: 'info',
    });
    const npm = spawn('npm', ['start'], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: 'pipe' });
    let output = '';
    let url = '';
    try {
      url = await new Promise<string>((resolve, reject) => {
        const onData = (chunk: Buffer) => {
          output += chunk.toString();
          const match = /engine listening on (http:\/\/\S+)/.exec(output);
          if (match) resolve(match[1]!);
        };
        npm.stdout.on('data', onData);
        npm.stderr.on('data', onData);
        npm.once('exit', (code) => reject(new Error(`npm start exited (${code}) before listening:\n${output}`)));
      });
      const exited = new Promise((resolve) => npm.once('exit', resolve));
      npm.kill('SIGTERM');
      await exited;
      assert.ok(await closedWithin(url, 30_000), `the engine at ${url} still answers after npm start was stopped`);
    } finally {
      npm.kill('SIGKILL');
      // If the engine outlived npm (the failure above), stop it through the pid its log lines carry.
      const orphan = /"pid":(\d+)/.exec(output)?.[1];
      if (url && orphan && (await answers(url))) process.kill(Number(orphan), 'SIGKILL');
      await fake.close();
      home.remove();
    }
  });
});
