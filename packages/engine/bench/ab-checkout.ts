import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** A revision of the repository ready to run: its folder, the engine CLI in it, and how to put it away. */
export interface Checkout {
  /** The ref as given, or "working tree". */
  label: string;
  /** The commit, with "+ changes" when it is a working tree with uncommitted changes. */
  commit: string;
  root: string;
  cli: string;
  remove(): void;
}

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** The repository this bench runs from. */
export const repositoryRoot = (): string =>
  git(path.dirname(fileURLToPath(import.meta.url)), 'rev-parse', '--show-toplevel');

const cliOf = (root: string): string => path.join(root, 'packages/engine/src/cli.ts');

/** The repository's working tree as it is, uncommitted changes included. */
export function workingTree(root: string): Checkout {
  const changed = git(root, 'status', '--porcelain', '--untracked-files=no') !== '';
  const commit = `${git(root, 'rev-parse', '--short', 'HEAD')}${changed ? ' + changes' : ''}`;
  return { label: 'working tree', commit, root, cli: cliOf(root), remove: () => undefined };
}

/**
 * Checks `ref` out into a temporary git worktree (detached) and gives it packages: links to this checkout's installed
 * packages when both revisions have the same package-lock.json (the workspace's own packages linked to the worktree's
 * copies), `npm ci` otherwise.
 */
export function checkoutRevision(root: string, ref: string): Checkout {
  let commit: string;
  try {
    commit = git(root, 'rev-parse', '--verify', '--short', `${ref}^{commit}`);
  } catch {
    throw new Error(`${ref} is not a commit of this repository; give a branch, tag or commit (for example HEAD~1)`);
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'mnemos-ab-'));
  git(root, 'worktree', 'add', '--detach', dir, commit);
  const remove = () => {
    // The links go first, so that removing the worktree cannot reach through them into this checkout's packages.
    rmSync(path.join(dir, 'node_modules'), { recursive: true, force: true });
    for (const pkg of readdirSync(path.join(dir, 'packages')))
      rmSync(path.join(dir, 'packages', pkg, 'node_modules'), { recursive: true, force: true });
    git(root, 'worktree', 'remove', '--force', dir);
  };
  try {
    const lockThere = execFileSync('git', ['show', `${commit}:package-lock.json`], {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
    const sameLock = readFileSync(path.join(root, 'package-lock.json'), 'utf8') === lockThere;
    if (sameLock) linkInstalledPackages(root, dir);
    else execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: ['ignore', 2, 2] });
  } catch (error) {
    remove();
    throw error;
  }
  return { label: ref, commit, root: dir, cli: cliOf(dir), remove };
}

/**
 * Gives `target` this checkout's node_modules: each installed package as a link, except the workspace's own packages,
 * which link (as npm links them) to the target's own folders so the target runs its own code throughout.
 */
function linkInstalledPackages(source: string, target: string): void {
  const linkFolder = (from: string, to: string) => {
    mkdirSync(to, { recursive: true });
    for (const entry of readdirSync(from, { withFileTypes: true })) {
      const at = path.join(to, entry.name);
      if (entry.isSymbolicLink() && readlinkSync(path.join(from, entry.name)).startsWith('../../packages/')) {
        symlinkSync(readlinkSync(path.join(from, entry.name)), at);
      } else if (entry.name.startsWith('@') && entry.isDirectory()) {
        linkFolder(path.join(from, entry.name), at);
      } else {
        symlinkSync(path.join(from, entry.name), at);
      }
    }
  };
  linkFolder(path.join(source, 'node_modules'), path.join(target, 'node_modules'));
  for (const pkg of readdirSync(path.join(source, 'packages'))) {
    const nested = path.join(source, 'packages', pkg, 'node_modules');
    if (existsSync(nested) && existsSync(path.join(target, 'packages', pkg))) {
      linkFolder(nested, path.join(target, 'packages', pkg, 'node_modules'));
    }
  }
}
