import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * MNEMOS_HOME cannot be written by the user the engine runs as (typically a bind-mounted host folder owned by
 * another user). Exit code 78 (EX_CONFIG): restarting does not help, the setup has to change.
 */
export class HomeNotWritableError extends Error {
  override readonly name = 'HomeNotWritableError';
  readonly exitCode = 78;
}

/**
 * MNEMOS_HOME must be writable before anything else starts. The message names the folder, its owner, the current
 * user, and both fixes: a named volume (which Docker creates owned by the image's user), or handing the host folder
 * to the engine's user (or running as the folder's owner).
 */
export function ensureWritableHome(home: string): void {
  try {
    mkdirSync(home, { recursive: true });
    accessSync(home, constants.W_OK | constants.X_OK);
  } catch {
    const { folder, owner } = nearestExisting(home);
    const uid = typeof process.getuid === 'function' ? process.getuid() : -1;
    const gid = typeof process.getgid === 'function' ? process.getgid() : -1;
    throw new HomeNotWritableError(
      `MNEMOS_HOME ${home} is not writable by uid ${uid} (the user the engine runs as): ` +
        `${folder === home ? 'the folder' : folder} is owned by uid ${owner}; ` +
        `fix: use a named volume (docker volume create mnemos-data, then -v mnemos-data:${home}), ` +
        `or chown -R ${uid}:${gid} ${folder} on the host ` +
        `(or start the container with --user set to the folder's owner).`,
    );
  }
}

/** The folder itself or, when it cannot be created, its closest existing parent (the one whose owner matters). */
function nearestExisting(home: string): { folder: string; owner: string } {
  for (let folder = home; ; folder = dirname(folder)) {
    try {
      return { folder, owner: String(statSync(folder).uid) };
    } catch {
      if (dirname(folder) === folder) return { folder, owner: 'unknown' };
    }
  }
}
