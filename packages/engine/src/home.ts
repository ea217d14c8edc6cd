import { accessSync, constants, lstatSync, mkdirSync, readdirSync, statSync, type Stats } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import type { EngineConfig } from './config/load.js';
import { PRIVATE_DIR } from './util/private-files.js';

/**
 * MNEMOS_HOME, or something the engine keeps in it, cannot be written by the user the engine runs as (typically a
 * bind-mounted host folder owned by another user). Exit code 78 (EX_CONFIG): restarting does not help, the setup has
 * to change.
 */
export class HomeNotWritableError extends Error {
  override readonly name = 'HomeNotWritableError';
  readonly exitCode = 78;
}

/** What the engine writes under MNEMOS_HOME with these settings: the embedded database and its lock, the model cache. */
export function homeParts(
  config: Pick<EngineConfig, 'databaseUrl'> & Partial<Pick<EngineConfig, 'embeddings'>>,
): string[] {
  const parts = config.databaseUrl === undefined ? ['db', 'db.lock'] : [];
  const { embeddings } = config;
  if (embeddings?.family === 'local' && !isAbsolute(embeddings.model)) parts.push('models');
  return parts;
}

/** A path the engine cannot use, and why. */
interface Blocked {
  path: string;
  stat: Stats | undefined;
  /** The error code: EACCES, EPERM, EROFS, ... */
  code: string;
}

/**
 * MNEMOS_HOME must be writable before anything else starts: the folder itself (created private when missing) and
 * everything in `parts` (see homeParts), down to each file of the database. The first path that is not gives one
 * message with the fix that works for it: a folder owned by another user needs a named volume or `chown`; one the
 * engine's user owns but whose mode forbids writing needs `chmod` (a `chown` to the same user changes nothing); a
 * read-only mount needs mounting read-write.
 */
export function ensureWritableHome(home: string, parts: readonly string[] = []): void {
  let blocked: Blocked | undefined;
  try {
    mkdirSync(home, { recursive: true, mode: PRIVATE_DIR });
    blocked = firstUnusable(home, constants.W_OK | constants.X_OK);
  } catch {
    blocked = nearestExisting(home);
  }
  for (const part of parts) blocked ??= firstUnusableInside(join(home, part));
  if (blocked !== undefined) throw new HomeNotWritableError(describe(home, blocked));
}

/** The path when this process cannot use it as `need` says. */
function firstUnusable(path: string, need: number): Blocked | undefined {
  try {
    accessSync(path, need);
    return undefined;
  } catch (error) {
    return { path, stat: statOrUndefined(path), code: codeOf(error) };
  }
}

/** The first file or folder at or below `path` the engine cannot read and write (missing paths are fine). */
function firstUnusableInside(path: string): Blocked | undefined {
  let stat: Stats;
  try {
    stat = lstatSync(path);
  } catch (error) {
    return codeOf(error) === 'ENOENT' ? undefined : { path, stat: undefined, code: codeOf(error) };
  }
  if (stat.isSymbolicLink()) return undefined;
  const { R_OK, W_OK, X_OK } = constants;
  if (!stat.isDirectory()) return firstUnusable(path, R_OK | W_OK);
  const blocked = firstUnusable(path, R_OK | W_OK | X_OK);
  if (blocked !== undefined) return blocked;
  let names: string[];
  try {
    names = readdirSync(path);
  } catch (error) {
    return { path, stat, code: codeOf(error) };
  }
  for (const name of names) {
    const inside = firstUnusableInside(join(path, name));
    if (inside !== undefined) return inside;
  }
  return undefined;
}

/** The closest existing parent of a home that cannot be created (the one whose owner matters). */
function nearestExisting(home: string): Blocked {
  for (let folder = home; ; folder = dirname(folder)) {
    const stat = statOrUndefined(folder);
    if (stat !== undefined || dirname(folder) === folder) {
      return { path: folder, stat, code: firstUnusable(folder, constants.W_OK)?.code ?? 'EACCES' };
    }
  }
}

function describe(home: string, blocked: Blocked): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : -1;
  const gid = typeof process.getgid === 'function' ? process.getgid() : -1;
  const what = blocked.path === home ? 'the folder' : blocked.path;
  const inHome = blocked.path === home || blocked.path.startsWith(`${home}/`);
  const lead = `MNEMOS_HOME ${home} is not writable by uid ${uid} (the user the engine runs as): `;
  if (blocked.code === 'EROFS') {
    return `${lead}${what} is on a read-only file system; fix: mount it read-write (without :ro in the container's -v option).`;
  }
  const owner = blocked.stat?.uid;
  if (owner !== undefined && owner === uid) {
    const mode = (blocked.stat!.mode & 0o777).toString(8).padStart(3, '0');
    const fix = inHome ? `chmod -R u+rwX ${home}` : `chmod u+rwx ${blocked.path}`;
    return `${lead}${what} belongs to uid ${uid} but its mode ${mode} does not let its owner write; fix: ${fix} on the host.`;
  }
  const target = blocked.path === home || !inHome ? blocked.path : home;
  return (
    `${lead}${what} is owned by uid ${owner ?? 'unknown'}; ` +
    `fix: use a named volume (docker volume create mnemos-data, then -v mnemos-data:${home}), ` +
    `or chown -R ${uid}:${gid} ${target} on the host ` +
    `(or start the container with --user set to the folder's owner).`
  );
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function codeOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : 'EACCES';
}
