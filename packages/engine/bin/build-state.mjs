// Whether the TypeScript projects of a checkout need compiling before the CLI can run: cheap file-time checks, so a
// start with an up-to-date build costs a few milliseconds and prints nothing.
import { existsSync, readdirSync, readFileSync, statSync, utimesSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** The newest modification time (ms) of the files under a folder, or 0 when it holds none. */
function newestUnder(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    const time = entry.isDirectory() ? newestUnder(full) : statSync(full).mtimeMs;
    if (time > newest) newest = time;
  }
  return newest;
}

/**
 * The build state of a project (a folder with tsconfig.json, sources in src/, build info in dist/.tsbuildinfo):
 * "missing" before its first build, "stale" when a source, its tsconfig.json or package.json changed after its last
 * build, "current" otherwise.
 */
export function projectBuildState(projectDir) {
  const info = join(projectDir, 'dist', '.tsbuildinfo');
  if (!existsSync(info)) return 'missing';
  const built = statSync(info).mtimeMs;
  const inputs = ['tsconfig.json', 'package.json'].map((f) => join(projectDir, f)).filter((f) => existsSync(f));
  const newestInput = Math.max(newestUnder(join(projectDir, 'src')), ...inputs.map((f) => statSync(f).mtimeMs));
  return newestInput > built ? 'stale' : 'current';
}

/** The project folders a solution tsconfig.json (one with `references`) builds. */
export function referencedProjects(solutionConfig) {
  const { references = [] } = JSON.parse(readFileSync(solutionConfig, 'utf8'));
  return references.map((r) => resolve(dirname(solutionConfig), r.path));
}

/** The build state of a whole solution: "missing" if any project was never built, else "stale" if any changed. */
export function solutionBuildState(solutionConfig) {
  const states = referencedProjects(solutionConfig).map(projectBuildState);
  if (states.includes('missing')) return 'missing';
  return states.includes('stale') ? 'stale' : 'current';
}

/**
 * Marks every project of a solution as built now, after `tsc -b` succeeded. tsc leaves a project's build info alone
 * when a change (a package.json field, say) does not change its output, and the file times would then say "stale"
 * at every start.
 */
export function markSolutionBuilt(solutionConfig) {
  const now = new Date();
  for (const project of referencedProjects(solutionConfig)) {
    const info = join(project, 'dist', '.tsbuildinfo');
    if (existsSync(info)) utimesSync(info, now, now);
  }
}
