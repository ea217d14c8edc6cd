// test-runner: long (started first, so the suite does not wait for it at the end)
import assert from 'node:assert/strict';
import { chmodSync, chownSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { call, tempHome, testEnv } from './helpers/engine.js';
import { PROCESS_LIMIT_MS, runCliToEnd, spawnEngine, type CliUser } from './helpers/process.js';

// A container runs the engine as uid 1000. As root (CI), the engine really runs as 1000 with no supplementary groups;
// as any other user it runs as that user and the bind mount is a folder it cannot write.
const asRoot = process.getuid?.() === 0;
const ENGINE_UID = asRoot ? 1000 : process.getuid!();
const ENGINE_GID = asRoot ? 1000 : process.getgid!();
const user: CliUser = asRoot ? { setpriv: 1000 } : {};

/** A test folder the engine's user can reach (mkdtemp makes it private to the test's user). */
function reachableRoot(): { path: string; remove(): void } {
  const root = tempHome('mnemos-rootless-', { database: 'none' });
  chmodSync(root.path, 0o755);
  return root;
}

describe('MNEMOS_HOME as the container user sees it', () => {
  it('a bind-mounted folder it cannot write fails at once: the folder, both uids, both fixes, exit 78', async () => {
    const root = reachableRoot();
    try {
      const data = join(root.path, 'data');
      mkdirSync(data);
      // The bind-mount case: the host folder belongs to root (or, run unprivileged, is read-only).
      if (asRoot) chownSync(data, 0, 0);
      chmodSync(data, asRoot ? 0o755 : 0o555);
      const owner = asRoot ? 0 : ENGINE_UID;
      const r = await runCliToEnd(['serve'], testEnv(data, { MNEMOS_API_LOG_LEVEL: 'info' }), user);
      assert.equal(r.code, 78, r.stderr);
      assert.equal(
        r.stderr,
        `mnemos: MNEMOS_HOME ${data} is not writable by uid ${ENGINE_UID} (the user the engine runs as): ` +
          `the folder is owned by uid ${owner}; ` +
          `fix: use a named volume (docker volume create mnemos-data, then -v mnemos-data:${data}), ` +
          `or chown -R ${ENGINE_UID}:${ENGINE_GID} ${data} on the host ` +
          `(or start the container with --user set to the folder's owner).\n`,
      );
      // Nothing else ran: no database, no model.
      assert.equal(r.stdout, '');
    } finally {
      root.remove();
    }
  });

  it("a folder the engine's user owns (a named volume) starts, retains, restarts and recalls", async () => {
    const root = reachableRoot();
    try {
      const data = join(root.path, 'volume');
      mkdirSync(data);
      if (asRoot) chownSync(data, ENGINE_UID, ENGINE_GID);
      const first = await spawnEngine(testEnv(data), PROCESS_LIMIT_MS, { user });
      let id: string | undefined;
      try {
        const stored = await call<{ memory_ids: string[] }>(first.url, 'POST', '/v1/default/banks/volume/memories', {
          content: 'Noor repairs old radios on Saturdays.',
        });
        assert.equal(stored.status, 200);
        id = stored.body.memory_ids[0];
      } finally {
        assert.equal(await first.stop(), 0);
      }
      // The engine really ran as that user: the database it created is theirs.
      assert.equal(statSync(join(data, 'db')).uid, ENGINE_UID);
      const second = await spawnEngine(testEnv(data), PROCESS_LIMIT_MS, { user });
      try {
        const found = await call<{ results: Array<{ id: string }> }>(
          second.url,
          'POST',
          '/v1/default/banks/volume/memories/recall',
          {
            query: 'Who repairs radios?',
          },
        );
        assert.equal(found.status, 200);
        assert.equal(found.body.results[0]?.id, id);
      } finally {
        assert.equal(await second.stop(), 0);
      }
    } finally {
      root.remove();
    }
  });
});
