// A consumer project for the packed tarballs whose package-lock.json is cut from the repository's own lockfile, so
// `npm ci --offline` installs it from the npm cache that the repository's `npm ci` filled. `npm install <tarball>`
// cannot run offline there: it asks for every dependency's full registry document, which `npm ci` never fetches, and
// it would pick versions newer than the locked ones, whose archives are not in the cache either.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** One entry of package-lock.json's `packages` map (the fields this module reads; the rest is copied as it is). */
interface LockEntry {
  name?: string;
  version?: string;
  link?: boolean;
  resolved?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [field: string]: unknown;
}

/** A tarball made by `npm pack` from the workspace at `workspace` (a path such as packages/engine). */
export interface PackedWorkspace {
  workspace: string;
  name: string;
  version: string;
  /** The tarball's file name, in the consumer folder. */
  filename: string;
  integrity: string;
  manifest: LockEntry;
}

export interface ConsumerOptions {
  repoRoot: string;
  /** The consumer project's folder; the tarballs must already be in it. */
  dir: string;
  /** The npm registry the repository's packages came from (`npm config get registry`). */
  registry: string;
  packed: PackedWorkspace[];
  /**
   * Extra registry packages for the consumer, each installed under `name` from the repository's entry at `from`
   * (a devDependency alias such as node_modules/ai-7 brings a second major of a package into the lockfile).
   */
  extra?: Array<{ name: string; range: string; from: string }>;
}

/** Where a package at `location` would find `name`: its own node_modules, then each enclosing one (Node's lookup). */
function lookupPaths(location: string, name: string): string[] {
  const paths: string[] = [];
  let at = location;
  for (;;) {
    paths.push(at === '' ? `node_modules/${name}` : `${at}/node_modules/${name}`);
    if (at === '') return paths;
    const inner = at.lastIndexOf('/node_modules/');
    at = inner >= 0 ? at.slice(0, inner) : '';
  }
}

/** The edges npm installs: dependencies, optional dependencies (when locked) and the peers that are not optional. */
function installedEdges(entry: LockEntry): Array<{ name: string; optional: boolean }> {
  const optionalPeer = (name: string) => entry.peerDependenciesMeta?.[name]?.optional === true;
  return [
    ...Object.keys(entry.dependencies ?? {}).map((name) => ({ name, optional: false })),
    ...Object.keys(entry.optionalDependencies ?? {}).map((name) => ({ name, optional: true })),
    ...Object.keys(entry.peerDependencies ?? {})
      .filter((name) => !optionalPeer(name))
      .map((name) => ({ name, optional: false })),
  ];
}

/** The package's name at a lockfile location (the part after the last node_modules/), or its aliased name. */
function packageName(location: string, entry: LockEntry): string {
  return entry.name ?? location.slice(location.lastIndexOf('node_modules/') + 'node_modules/'.length);
}

/**
 * The lock entry as it stands in the consumer's lockfile: a plain dependency of the project, not a dev one, with the
 * registry address of its archive. The repository's lockfile may leave that address out (npm's
 * omit-lockfile-registry-resolved); npm then asks the registry's document for it, which may not be in the cache,
 * while with the address and the integrity it takes the archive straight from the cache.
 */
function asConsumerEntry(location: string, entry: LockEntry, registry: string): LockEntry {
  const { dev: _dev, devOptional: _devOptional, peer: _peer, name: _alias, ...rest } = entry;
  if (rest.resolved !== undefined || rest.version === undefined) return rest;
  const name = packageName(location, entry);
  const file = `${name.slice(name.lastIndexOf('/') + 1)}-${rest.version}.tgz`;
  return { ...rest, resolved: new URL(`${name}/-/${file}`, registry).href };
}

/**
 * Writes package.json and package-lock.json for a project that depends on the tarballs (and the extras), holding
 * exactly the locked versions the repository's tests ran with. A dependency that the repository's tree cannot
 * resolve from the package's place (say, one the package forgot to declare, or an unpublished workspace) throws.
 */
export function writeConsumerProject(options: ConsumerOptions): void {
  const lock = JSON.parse(readFileSync(path.join(options.repoRoot, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const repo = lock.packages;
  const byWorkspace = new Map(options.packed.map((p) => [p.workspace, p]));
  const consumer: Record<string, LockEntry> = {};
  const rootDependencies: Record<string, string> = {};
  // Repository location -> consumer location, for the places whose path changes (workspaces, aliases).
  const moved: Array<[string, string]> = [];
  const toConsumer = (location: string) => {
    for (const [from, to] of moved) {
      if (location === from || location.startsWith(`${from}/`)) return to + location.slice(from.length);
    }
    return location;
  };
  const queue: Array<{ at: string; entry: LockEntry }> = [];

  for (const packed of options.packed) {
    const at = `node_modules/${packed.name}`;
    moved.push([packed.workspace, at]);
    rootDependencies[packed.name] = `file:${packed.filename}`;
    const { dependencies, peerDependencies, peerDependenciesMeta, optionalDependencies, bin, engines, license } =
      packed.manifest;
    consumer[at] = {
      version: packed.version,
      resolved: `file:${packed.filename}`,
      integrity: packed.integrity,
      ...(license === undefined ? {} : { license }),
      ...(dependencies === undefined ? {} : { dependencies }),
      ...(optionalDependencies === undefined ? {} : { optionalDependencies }),
      ...(peerDependencies === undefined ? {} : { peerDependencies }),
      ...(peerDependenciesMeta === undefined ? {} : { peerDependenciesMeta }),
      ...(typeof bin === 'object' && bin !== null ? { bin } : {}),
      ...(engines === undefined ? {} : { engines }),
    };
    queue.push({ at: packed.workspace, entry: packed.manifest });
  }
  for (const extra of options.extra ?? []) {
    const entry = repo[extra.from];
    if (!entry) throw new Error(`${extra.from} is not in package-lock.json; run npm install`);
    const at = `node_modules/${extra.name}`;
    moved.push([extra.from, at]);
    rootDependencies[extra.name] = extra.range;
    consumer[at] = asConsumerEntry(extra.from, entry, options.registry);
    queue.push({ at: extra.from, entry });
  }

  for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
    for (const edge of installedEdges(item.entry)) {
      const found = lookupPaths(item.at, edge.name).find((candidate) => repo[candidate] !== undefined);
      if (found === undefined) {
        if (edge.optional) continue;
        throw new Error(`${item.at} needs ${edge.name}, which the repository's lockfile does not hold where it looks`);
      }
      const entry = repo[found]!;
      if (entry.link === true) {
        if (!byWorkspace.has(entry.resolved ?? '')) {
          throw new Error(`${item.at} needs ${edge.name}, the unpublished workspace ${String(entry.resolved)}`);
        }
        continue;
      }
      const at = toConsumer(found);
      if (consumer[at] !== undefined) {
        if (consumer[at].version !== entry.version) throw new Error(`two versions of ${edge.name} meet at ${at}`);
        continue;
      }
      consumer[at] = asConsumerEntry(found, entry, options.registry);
      queue.push({ at: found, entry });
    }
  }

  const manifest = { name: 'mnemos-consumer', version: '1.0.0', private: true, type: 'module' };
  writeFileSync(
    path.join(options.dir, 'package.json'),
    JSON.stringify({ ...manifest, dependencies: rootDependencies }, null, 2),
  );
  const root = { name: manifest.name, version: manifest.version, dependencies: rootDependencies };
  const lockfile = { name: manifest.name, version: manifest.version, lockfileVersion: 3, requires: true };
  writeFileSync(
    path.join(options.dir, 'package-lock.json'),
    JSON.stringify({ ...lockfile, packages: { '': root, ...consumer } }, null, 2),
  );
}
