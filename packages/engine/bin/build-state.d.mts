/** "missing" before the first build, "stale" when inputs changed after the last build, "current" otherwise. */
export type BuildState = 'missing' | 'stale' | 'current';
/** The build state of a project folder (tsconfig.json, src/, dist/.tsbuildinfo). */
export function projectBuildState(projectDir: string): BuildState;
/** The project folders a solution tsconfig.json (one with `references`) builds. */
export function referencedProjects(solutionConfig: string): string[];
/** The build state of every project a solution tsconfig.json references, taken together. */
export function solutionBuildState(solutionConfig: string): BuildState;
/** Marks every project of a solution as built now (after a successful `tsc -b`). */
export function markSolutionBuilt(solutionConfig: string): void;
