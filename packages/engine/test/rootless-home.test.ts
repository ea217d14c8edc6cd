// test-runner: long (started first, so the suite does not wait for it at the end)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { call, testEnv } from './helpers/engine.js';
import { PROCESS_LIMIT_MS, runCliToEnd, spawnEngine, type CliUser } from './helpers/process.js';

// A container runs the engine as uid 1000. As root (CI), the engine really runs as 1000 with no supplementary groups;
// as any other user it runs as that user and the bind mount is a folder it cannot write.
const asRoot = process.getuid?.() === 0;
const ENGINE_UID = asRoot ? 1000 : process.getuid!();
const ENGINE_GID = asRoot ? 1000 : process.getgid!();
const user: CliUser = asRoot ? { setpriv: 1000 } : {};

/** A hub address where nothing listens (no engine in these tests gets as far as asking it). */
const CLOSED = 'http://127.0.0.1:9';

/** The reason and fix for a path owned by another user: only a volume of the engine's own, or a chown, helps. */
const chownFix = (data: string, what: string, owner: number) =>
  `${what} is owned by uid ${owner}; ` +
  `fix: use a named volume (docker volume create mnemos-data, then -v mnemos-data:${data}), ` +
  `or chown -R ${ENGINE_UID}:${ENGINE_GID} ${data} on the host ` +
  `(or start the container with --user set to the folder's owner).`;

/** The engine's user owns the path already: a chown to that same user changes nothing, the mode has to. */
const chmodFix = (data: string, what: string, mode: string) =>
  `${what} belongs to uid ${ENGINE_UID} but its mode ${mode} does not let its owner write; ` +
  `fix: chmod -R u+rwX ${data} on the host.`;

/**
 * Where the engine's user can reach a test folder: the temporary folder when every folder above it lets other users
 * pass, else /tmp (a TMPDIR such as /root/tmp is private to the test's user).
 */
function reachableBase(): string {
  const base = tmpdir();
  for (let dir = base; ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return '/tmp';
    if (dirname(dir) === dir) return base;
  }
}

/** A test folder the engine's user can reach (mkdtemp makes it private to the test's user). */
function reachableRoot(): { path: string; remove(): void } {
  const path = mkdtempSync(join(reachableBase(), 'mnemos-rootless-'));
  chmodSync(path, 0o755);
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
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
      const r = await runCliToEnd(['serve'], testEnv(data, { MNEMOS_API_LOG_LEVEL: 'info' }), user);
      assert.equal(r.code, 78, r.stderr);
      assert.equal(
        r.stderr,
        `mnemos: MNEMOS_HOME ${data} is not writable by uid ${ENGINE_UID} (the user the engine runs as): ` +
          `${asRoot ? chownFix(data, 'the folder', 0) : chmodFix(data, 'the folder', '555')}\n`,
      );
      // Nothing else ran: no database, no model.
      assert.equal(r.stdout, '');
    } finally {
      root.remove();
    }
  });

  it('every path under it the engine cannot write fails at once with that path and the fix that works for it, exit 78', async () => {
    const root = reachableRoot();
    try {
      /** A home the engine's user owns, with `block` making one path in it unusable; it answers the expected reason. */
      const cases: Array<{ name: string; env?: Record<string, string>; block: (data: string) => string }> = [
        {
          name: 'db',
          block: (data) => lockOut(join(data, 'db'), 0o755),
        },
        {
          name: 'models',
          // A hub model: its files go to models/ (the hub is closed, so a start that got that far fails).
          env: { MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: 'Xenova/all-MiniLM-L6-v2', MNEMOS_API_EMBEDDINGS_HUB_URL: CLOSED },
          block: (data) => lockOut(join(data, 'models'), 0o755),
        },
        {
          name: 'a file of the database',
          block: (data) => {
            mkdirSync(join(data, 'db'));
            if (asRoot) chownSync(join(data, 'db'), ENGINE_UID, ENGINE_GID);
            const file = join(data, 'db', 'PG_VERSION');
            writeFileSync(file, '17\n');
            return lockOut(file, 0o644, true);
          },
        },
        {
          name: 'the folder itself, mode 555',
          block: (data) => {
            chmodSync(data, 0o555);
            return chmodFix(data, 'the folder', '555');
          },
        },
      ];
      /** As root: `path` goes to root (mode `mode`); unprivileged: it stays the engine's user's, without write bits. */
      function lockOut(path: string, mode: number, exists = false): string {
        if (!exists) mkdirSync(path);
        if (asRoot) {
          chownSync(path, 0, 0);
          chmodSync(path, mode);
          return chownFix(dataOf(path), path, 0);
        }
        const readOnly = mode & 0o555;
        chmodSync(path, readOnly);
        return chmodFix(dataOf(path), path, readOnly.toString(8));
      }
      const dataOf = (path: string) => path.slice(0, path.indexOf('/', root.path.length + 1));
      // The starts fail before any slow work, so they run side by side.
      await Promise.all(
        cases.map(async (c, i) => {
          const data = join(root.path, `home${i}`);
          mkdirSync(data);
          if (asRoot) chownSync(data, ENGINE_UID, ENGINE_GID);
          const reason = c.block(data);
          const r = await runCliToEnd(['serve'], testEnv(data, { MNEMOS_API_LOG_LEVEL: 'info', ...c.env }), user);
          assert.equal(r.code, 78, `${c.name}: ${r.stderr}`);
          assert.equal(
            r.stderr,
            `mnemos: MNEMOS_HOME ${data} is not writable by uid ${ENGINE_UID} (the user the engine runs as): ${reason}\n`,
            c.name,
          );
          assert.equal(r.stdout, '', `${c.name}: nothing else ran`);
        }),
      );
    } finally {
      // Unprivileged, the read-only paths would keep the test's own user from removing them.
      spawnSync('chmod', ['-R', 'u+rwX', root.path]);
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
