import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { acquireDatabaseLock, DatabaseLockedError, processStart } from '../src/db/lock.js';
import { tempHome } from './helpers/engine.js';
import { deadPid } from './helpers/process.js';

describe('the embedded database lock', () => {
  const home = tempHome('mnemos-lock-');
  after(() => home.remove());
  let n = 0;
  const paths = () => {
    const dataDir = join(home.path, `db${++n}`);
    return { dataDir, lock: `${dataDir}.lock` };
  };

  it('names its holder (pid and process start time) and is removed on release', () => {
    const { dataDir, lock } = paths();
    const held = acquireDatabaseLock(lock, dataDir);
    const holder = JSON.parse(readFileSync(lock, 'utf8')) as { pid: number; processStart: string | null };
    assert.equal(holder.pid, process.pid);
    assert.equal(holder.processStart, processStart(process.pid));
    assert.notEqual(holder.processStart, null, 'Linux has /proc/<pid>/stat');
    held.release();
    assert.equal(existsSync(lock), false);
  });

  it('refuses a second holder while the first lives, naming its pid and what to do', () => {
    const { dataDir, lock } = paths();
    const held = acquireDatabaseLock(lock, dataDir);
    try {
      assert.throws(
        () => acquireDatabaseLock(lock, dataDir),
        (e: unknown) =>
          e instanceof DatabaseLockedError &&
          e.message.includes(`pid ${process.pid}`) &&
          e.message.includes(dataDir) &&
          /stop that engine/.test(e.message) &&
          e.message.includes('MNEMOS_API_DATABASE_URL') &&
          !e.message.includes('\n'),
      );
    } finally {
      held.release();
    }
  });

  it('takes over a lock whose holder has exited', () => {
    const { dataDir, lock } = paths();
    const pid = deadPid();
    writeFileSync(lock, JSON.stringify({ pid, processStart: '1', since: '2020-01-01T00:00:00.000Z' }));
    const held = acquireDatabaseLock(lock, dataDir);
    assert.equal((JSON.parse(readFileSync(lock, 'utf8')) as { pid: number }).pid, process.pid);
    held.release();
  });

  it('takes over a lock whose pid now belongs to another process (a different start time)', () => {
    const { dataDir, lock } = paths();
    // This test's own pid is alive, but it was not started at kernel tick 1: the holder named in the file is gone.
    writeFileSync(lock, JSON.stringify({ pid: process.pid, processStart: '1', since: '2020-01-01T00:00:00.000Z' }));
    const held = acquireDatabaseLock(lock, dataDir);
    const holder = JSON.parse(readFileSync(lock, 'utf8')) as { processStart: string };
    assert.equal(holder.processStart, processStart(process.pid));
    held.release();
  });

  it('does not release a lock another process has taken over meanwhile', () => {
    const { dataDir, lock } = paths();
    const held = acquireDatabaseLock(lock, dataDir);
    const other = JSON.stringify({ pid: process.ppid, processStart: processStart(process.ppid), since: 'now' });
    writeFileSync(lock, other);
    held.release();
    assert.equal(readFileSync(lock, 'utf8'), other);
  });
});
