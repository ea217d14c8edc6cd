// The module hooks compiled-sources.mjs registers: a source file of a built project resolves to its compiled file. A
// source with no compiled twin (none exists for a current build, but a new file between builds could) stays as it is.
//
// Plain JavaScript (a dependency under node_modules, a project's compiled dist/) is resolved and loaded here without
// passing on to tsx's hooks, which run after these: tsx has nothing to compile there, but reads each such module a
// second time and scans it for dynamic imports, for each of the thousand-odd modules importing the engine loads.
// Only relative imports are resolved here (a relative ESM specifier names its file exactly); bare ones (packages,
// subpath imports) go through the usual chain.
import { readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve as resolvePath } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { referencedProjects } from '../packages/engine/bin/build-state.mjs';

const root = resolvePath(dirname(fileURLToPath(import.meta.url)), '..');
const sourceRoots = referencedProjects(resolvePath(root, 'tsconfig.json')).map((project) => ({
  src: pathToFileURL(resolvePath(project, 'src')).href + '/',
  dist: pathToFileURL(resolvePath(project, 'dist')).href + '/',
}));

const plainJs = (url) =>
  url.startsWith('file:') &&
  /\.[cm]?js$/.test(url) &&
  (url.includes('/node_modules/') || sourceRoots.some(({ dist }) => url.startsWith(dist)));

export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL;
  if (parent !== undefined && plainJs(parent) && /^\.\.?\/[^?#]*\.[cm]?js$/.test(specifier)) {
    const url = new URL(specifier, parent).href;
    if (plainJs(url) && isFile(url)) return { url, format: formatOf(url), shortCircuit: true };
  }
  const resolved = await nextResolve(specifier, context);
  if (!resolved.url.endsWith('.ts')) return resolved;
  const project = sourceRoots.find(({ src }) => resolved.url.startsWith(src));
  if (project === undefined) return resolved;
  const compiled = project.dist + resolved.url.slice(project.src.length).replace(/\.ts$/, '.js');
  if (!isFile(compiled)) return resolved;
  return { ...resolved, url: compiled, format: 'module' };
}

export async function load(url, context, nextLoad) {
  if (!plainJs(url)) return nextLoad(url, context);
  // CommonJS is left to Node's require (source null), as Node's own load does.
  if (context.format === 'commonjs') return { format: 'commonjs', source: null, shortCircuit: true };
  if (context.format === 'module') {
    return { format: 'module', source: await readFile(fileURLToPath(url)), shortCircuit: true };
  }
  return nextLoad(url, context);
}

function isFile(url) {
  return statSync(fileURLToPath(url), { throwIfNoEntry: false })?.isFile() === true;
}

/**
 * A .js file's format from the "type" of the nearest package.json, as Node decides it; with no "type" it is left
 * undefined, for Node's own load to tell from the file's syntax.
 */
function formatOf(url) {
  if (url.endsWith('.mjs')) return 'module';
  if (url.endsWith('.cjs')) return 'commonjs';
  const type = packageType(dirname(fileURLToPath(url)));
  return type === 'module' || type === 'commonjs' ? type : undefined;
}

const types = new Map();

function packageType(dir) {
  const known = types.get(dir);
  if (known !== undefined) return known;
  let type;
  try {
    type = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).type ?? 'none';
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
    const up = dirname(dir);
    type = up === dir ? 'none' : packageType(up);
  }
  types.set(dir, type);
  return type;
}
