import { existsSync, linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { PRIVATE_FILE } from '../util/private-files.js';

/** The embedded database is open in another live process; the message names it and what to do. */
export class DatabaseLockedError extends Error {
  override readonly name = 'DatabaseLockedError';
}

interface Holder {
  pid: number;
  /** The process's start time as the kernel counts it (/proc/<pid>/stat); tells a recycled pid from the holder. */
  processStart: string | null;
  /** When the lock was taken (ISO 8601), for the message. */
  since: string;
}

export interface DatabaseLock {
  readonly path: string;
  release(): void;
}

/**
 * Takes the lock file that makes one process the embedded database's only user (PGlite has no locking of its own, and
 * two processes writing one data folder lose each other's writes). The file names the holder's pid and process start
 * time; a lock whose holder is gone (crashed, killed) is taken over. Creation is exclusive (a hard link), and a
 * takeover happens under a second exclusive file, so of two processes starting at once exactly one gets the database.
 */
export function acquireDatabaseLock(path: string, dataDir: string): DatabaseLock {
  const mine: Holder = { pid: process.pid, processStart: processStart(process.pid), since: new Date().toISOString() };
  for (let attempt = 0; attempt < 50; attempt++) {
    if (createExclusive(path, mine)) return { path, release: () => releaseIfMine(path, mine) };
    const holder = readHolder(path);
    if (holder !== undefined && isAlive(holder)) {
      throw new DatabaseLockedError(
        `the embedded database in ${dataDir} is in use by another Mnemos process ` +
          `(pid ${holder.pid}, since ${holder.since}); stop that engine first, or point every engine at one ` +
          'PostgreSQL server with MNEMOS_API_DATABASE_URL to run several.',
      );
    }
    takeOver(path, holder);
  }
  throw new DatabaseLockedError(
    `could not take the lock ${path}; another process keeps changing it. Remove it if no Mnemos runs.`,
  );
}

/** Removes a dead holder's lock under the takeover file, unless someone else replaced it meanwhile. */
function takeOver(path: string, stale: Holder | undefined): void {
  const guard = `${path}.takeover`;
  const me: Holder = { pid: process.pid, processStart: processStart(process.pid), since: new Date().toISOString() };
  if (!createExclusive(guard, me)) {
    // Another process is taking over right now; a guard left by a process that died mid-takeover is removed.
    const other = readHolder(guard);
    if (other !== undefined && !isAlive(other)) removeQuietly(guard);
    return;
  }
  try {
    // Only a takeover (under the guard) removes another process's lock, so what is read here stays until removed.
    const now = readHolder(path);
    const unreadable = now === undefined && stale === undefined && existsSync(path);
    if (unreadable || (now !== undefined && sameHolder(now, stale))) removeQuietly(path);
  } finally {
    removeQuietly(guard);
  }
}

/**
 * Creates `path` holding `holder`, or answers false when it exists. The content is written to a private file first and
 * linked into place, so the lock file is never seen empty or half-written.
 */
function createExclusive(path: string, holder: Holder): boolean {
  const draft = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  writeFileSync(draft, JSON.stringify(holder), { mode: PRIVATE_FILE });
  try {
    linkSync(draft, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    removeQuietly(draft);
  }
}

/** The holder named in the file; undefined when it is gone or unreadable (a holder that died while writing it). */
function readHolder(path: string): Holder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<Holder>;
    if (typeof parsed.pid !== 'number') return undefined;
    return { pid: parsed.pid, processStart: parsed.processStart ?? null, since: parsed.since ?? 'unknown' };
  } catch {
    return undefined;
  }
}

function sameHolder(a: Holder | undefined, b: Holder | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.pid === b.pid && a.processStart === b.processStart && a.since === b.since;
}

function isAlive(holder: Holder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // Same pid, different start time: the holder died and the pid was given to another process.
  const start = processStart(holder.pid);
  return holder.processStart === null || start === null || start === holder.processStart;
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks after boot); null where /proc does not exist. */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may contain spaces; fields after it are space-separated.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

function releaseIfMine(path: string, mine: Holder): void {
  if (sameHolder(readHolder(path), mine)) removeQuietly(path);
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}
