import fs from 'node:fs';
import { join } from 'node:path';

/**
 * What the engine keeps under MNEMOS_HOME (the embedded database, the model cache, the lock) is its user's alone:
 * files 0600, folders 0700, whatever the umask.
 */
export const PRIVATE_FILE = 0o600;
export const PRIVATE_DIR = 0o700;

/** Permission bits for the group and others, cleared from every mode the engine creates a file or folder with. */
const SHARED_BITS = 0o077;

/**
 * Makes `path` and everything in it private (files 0600, folders 0700). Only entries this process's user owns are
 * changed (the others it could not change, and are not the engine's); symbolic links are left alone. Missing paths
 * are skipped.
 */
export function makePrivate(path: string): void {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(path);
  } catch {
    return;
  }
  if (stat.isSymbolicLink()) return;
  const mine = typeof process.getuid !== 'function' || stat.uid === process.getuid();
  if (stat.isDirectory()) {
    if (mine && (stat.mode & 0o777) !== PRIVATE_DIR) fs.chmodSync(path, PRIVATE_DIR);
    for (const name of fs.readdirSync(path)) makePrivate(join(path, name));
  } else if (mine && (stat.mode & 0o777) !== PRIVATE_FILE) {
    fs.chmodSync(path, PRIVATE_FILE);
  }
}

/**
 * From now on, files and folders this thread creates through `node:fs` get no permission bits for the group or
 * others. The embedded database needs it: its WebAssembly file system ignores the process umask and sets every file
 * it creates to 0666 itself (a `chmod` after the `open`), so the umask alone leaves them writable by every user.
 * Called on the database's own thread, which runs nothing else.
 */
export function keepCreatedFilesPrivate(): void {
  const mask = (mode: fs.Mode): number => (typeof mode === 'number' ? mode : parseInt(mode, 8)) & ~SHARED_BITS;
  const { chmodSync, fchmodSync, mkdirSync, openSync, writeFileSync } = fs;
  fs.chmodSync = (path, mode) => chmodSync(path, mask(mode));
  fs.fchmodSync = (fd, mode) => fchmodSync(fd, mask(mode));
  fs.openSync = (path, flags, mode) => openSync(path, flags, mask(mode ?? 0o666));
  fs.mkdirSync = (path: fs.PathLike, options?: fs.Mode | fs.MakeDirectoryOptions | null) =>
    mkdirSync(
      path,
      typeof options === 'object' && options !== null
        ? { ...options, mode: mask(options.mode ?? 0o777) }
        : { mode: mask(options ?? 0o777) },
    );
  fs.writeFileSync = (file, data, options) =>
    writeFileSync(
      file,
      data,
      typeof options === 'object' && options !== null ? { ...options, mode: mask(options.mode ?? 0o666) } : options,
    );
}
