import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

export class HomeNotWritableError extends Error {
  override readonly name = 'HomeNotWritableError';
}

/**
 * MNEMOS_HOME must be writable before anything else starts. The message names the folder, its owner, the current
 * user, and the usual fix (containers run as UID 1000).
 */
export function ensureWritableHome(home: string): void {
  try {
    mkdirSync(home, { recursive: true });
    accessSync(home, constants.W_OK | constants.X_OK);
  } catch {
    let target = home;
    let owner = 'unknown';
    for (; ;) {
      try {
        owner = String(statSync(target).uid);
        break;
      } catch {
        const up = dirname(target);
        if (up === target) break;
        target = up;
      }
    }
    const uid = typeof process.getuid === 'function' ? process.getuid() : -1;
    throw new HomeNotWritableError(
      `MNEMOS_HOME ${home} is not writable (folder ${target} is owned by uid ${owner}; Mnemos runs as uid ${uid}). ` +
        `Fix: chown -R ${uid}:${uid} ${home} (a container runs as UID 1000, so a bind-mounted host folder must be owned by 1000), use a named volume, or set MNEMOS_HOME to a writable folder.`,
    );
  }
}
