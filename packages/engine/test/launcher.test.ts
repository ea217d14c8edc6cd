// The `mnemos` command as installed by `npm ci`: the committed launcher (bin/mnemos.mjs) linked into node_modules/.bin,
// and the build-state check that decides whether it compiles first.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { projectBuildState, referencedProjects, solutionBuildState } from '../bin/build-state.mjs';
import { REPO_ROOT, tempHome } from './helpers/engine.js';

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
