#!/usr/bin/env node
// The `mnemos` command. It exists from install time (unlike dist/), so `npm ci` links it and `npx mnemos` finds it.
// In a source checkout it compiles what changed first (tsc -b, incremental); an installed package ships dist/ and
// runs it as is. The CLI is imported into this process rather than spawned, so signals (Ctrl-C, `npm start` being
// stopped) reach the engine directly and no child is left behind.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { markSolutionBuilt, solutionBuildState } from './build-state.mjs';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = resolve(packageDir, '../..');
const solution = join(repoRoot, 'tsconfig.json');
const cli = join(packageDir, 'dist', 'cli.js');
const inCheckout = existsSync(join(packageDir, 'src')) && existsSync(solution);

const state = inCheckout ? solutionBuildState(solution) : 'current';
if (state !== 'current') {
  const why = state === 'missing' ? 'first run, about a minute' : 'sources changed, compiling only those';
  process.stderr.write(`building mnemos (${why})...\n`);
  const tsc = createRequire(join(repoRoot, 'package.json')).resolve('typescript/bin/tsc');
  // The compiler's messages go to stderr: stdout may be a protocol stream (mnemos mcp speaks MCP over stdio).
  const build = spawnSync(process.execPath, [tsc, '-b', solution], { cwd: repoRoot, stdio: ['ignore', 2, 2] });
  if (build.status !== 0) {
    process.stderr.write(`mnemos: the build failed (tsc -b in ${repoRoot}); fix the errors above and run again.\n`);
    process.exit(1);
  }
  markSolutionBuilt(solution);
}
if (!existsSync(cli)) {
  process.stderr.write(`mnemos: ${cli} is missing; reinstall the package (or run npm run build in a checkout).\n`);
  process.exit(1);
}
await import(pathToFileURL(cli).href);
