// The module hooks compiled-sources.mjs registers: a source file of a built project resolves to its compiled file. A
// source with no compiled twin (none exists for a current build, but a new file between builds could) stays as it is.
import { existsSync } from 'node:fs';
import { dirname, resolve as resolvePath } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { referencedProjects } from '../packages/engine/bin/build-state.mjs';

const root = resolvePath(dirname(fileURLToPath(import.meta.url)), '..');
const sourceRoots = referencedProjects(resolvePath(root, 'tsconfig.json')).map((project) => ({
  src: pathToFileURL(resolvePath(project, 'src')).href + '/',
  dist: pathToFileURL(resolvePath(project, 'dist')).href + '/',
}));

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  if (!resolved.url.endsWith('.ts')) return resolved;
  const project = sourceRoots.find(({ src }) => resolved.url.startsWith(src));
  if (project === undefined) return resolved;
  const compiled = project.dist + resolved.url.slice(project.src.length).replace(/\.ts$/, '.js');
  if (!existsSync(fileURLToPath(compiled))) return resolved;
  return { ...resolved, url: compiled, format: 'module' };
}
