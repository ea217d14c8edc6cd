// test-runner: long (started first, so the suite does not wait for it at the end)
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { encryptExisting, rotateKey } from '../src/crypto/admin.js';
import { EngineRegistration, enginesNotOnKey } from '../src/crypto/connected-engines.js';
import { MasterKey } from '../src/crypto/envelope.js';
import { ENCRYPTION_LOCK, readRecord } from '../src/crypto/record.js';
import type { Database } from '../src/db/database.js';
import { openDatabase } from '../src/db/open.js';
import { startEngine, type RunningEngine } from '../src/index.js';
import { call, sharedLocalModel, tempHome, testEnv } from './helpers/engine.js';
import { createScratchDatabase, waitFor, type ScratchDatabase } from './helpers/postgres-server.js';
import { runCliToEnd, spawnEngine } from './helpers/process.js';

/**
 * Rotating the master key of an external database that several engines share (the real PostgreSQL server): no write
 * an engine acknowledges may end up unreadable by the engines started with the new key.
 */

const OLD = Buffer.alloc(32, 7).toString('base64');
const NEW = Buffer.alloc(32, 8).toString('base64');
const NEW_FINGERPRINT = new MasterKey(Buffer.from(NEW, 'base64')).fingerprintHex;
const home = tempHome('mnemos-rotation-', { database: 'none' });
after(() => home.remove());

interface Acked {
  bank: string;
  id: string;
  text: string;
}

function engineEnv(scratch: ScratchDatabase, key: string): Record<string, string> {
  return testEnv(home.path, { MNEMOS_API_DATABASE_URL: scratch.url, MNEMOS_API_ENCRYPTION_MASTER_KEY: key });
}

async function startOn(scratch: ScratchDatabase, key: string): Promise<RunningEngine> {
  return startEngine({ env: engineEnv(scratch, key), engine: { model: await sharedLocalModel() } });
}

/** Retains one memory; answers the acknowledged memory, or the refusal's status and body. */
async function retain(url: string, bank: string, text: string) {
  const r = await call<{ memory_ids?: string[]; code?: string; detail?: string }>(
    url,
    'POST',
    `/v1/default/banks/${bank}/memories`,
    { content: text },
  );
  const id = r.body.memory_ids?.[0];
  return { status: r.status, body: r.body, acked: r.status === 200 && id ? { bank, id, text } : undefined };
}

/** Retains and expects the acknowledgement. */
async function ack(url: string, bank: string, text: string): Promise<Acked> {
  const r = await retain(url, bank, text);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.acked!;
}

/** `mnemos rotate-key` through the real CLI, from the old key to the new one. */
function rotateCli(scratch: ScratchDatabase, phase?: 'begin' | 'finish') {
  const env = testEnv(home.path, {
    MNEMOS_API_DATABASE_URL: scratch.url,
    MNEMOS_API_ENCRYPTION_MASTER_KEY: OLD,
    MNEMOS_API_ENCRYPTION_NEW_MASTER_KEY: NEW,
  });
  return runCliToEnd(phase === undefined ? ['rotate-key'] : ['rotate-key', '--phase', phase], env);
}

/** A refusal: exit 75, one line, naming the engines by host and pid. */
function assertRefused(r: { code: number | null; stderr: string }, phase: string, pids: number[]): void {
  assert.equal(r.code, 75, r.stderr);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  const count = pids.length === 1 ? '1 engine still serves' : `${pids.length} engines still serve`;
  assert.match(
    lines[0]!,
    new RegExp(`^mnemos: rotate-key refused \\(phase ${phase}\\): ${count} with a key other than the new one: `),
  );
  const host = hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const named = [...lines[0]!.matchAll(new RegExp(`${host} pid (\\d+) \\(started `, 'g'))].map((m) => Number(m[1]));
  assert.deepEqual(named.sort(), [...pids].sort());
  assert.match(lines[0]!, /nothing was changed/);
}

/** Every acknowledged memory reads back, whole, through `url` (an engine started with the new key). */
async function assertReadable(url: string, acked: readonly Acked[]): Promise<void> {
  for (const a of acked) {
    const got = await call<{ text?: string }>(url, 'GET', `/v1/default/banks/${a.bank}/memories/${a.id}`);
    assert.equal(got.status, 200, `${a.bank}/${a.id}: ${JSON.stringify(got.body)}`);
    assert.equal(got.body.text, a.text);
  }
  for (const bank of new Set(acked.map((a) => a.bank))) {
    const listed = await call<{ total: number; items: unknown[] }>(url, 'GET', `/v1/default/banks/${bank}/memories`);
    assert.equal(listed.body.items.length, listed.body.total, `bank ${bank} lists every memory it counts`);
  }
}

/** A fresh engine on the new key (no key in its memory from before) reads every acknowledged memory. */
async function assertReadableAfterRestart(
  scratch: ScratchDatabase,
  acked: readonly Acked[],
  more: (url: string) => Promise<void> = async () => undefined,
): Promise<void> {
  const c = await startOn(scratch, NEW);
  try {
    await assertReadable(c.url, acked);
    await more(c.url);
  } finally {
    await c.close();
  }
}

async function withScratch(prefix: string, fn: (scratch: ScratchDatabase) => Promise<void>): Promise<void> {
  const scratch = await createScratchDatabase(prefix);
  try {
    await fn(scratch);
  } finally {
    await scratch.drop();
  }
}

describe('rotate-key with several engines on one external database', () => {
  it('refuses while an engine on the old key is connected and names it; a crashed one counts until its heartbeat is stale; then every acknowledged write reads with the new key', async () => {
    await withScratch('rotation_refuse', async (scratch) => {
      const a = await spawnEngine(engineEnv(scratch, OLD));
      let b: RunningEngine | undefined = await startOn(scratch, OLD);
      const acked: Acked[] = [];
      try {
        acked.push(await ack(a.url, 'alpha', 'Olek tunes pianos in Gdansk.'));
        acked.push(await ack(b.url, 'beta', 'Priya restores clocks in Leeds.'));

        assertRefused(await rotateCli(scratch), 'all', [a.child.pid!, process.pid]);
        // Nothing changed: the old key still creates banks.
        acked.push(await ack(a.url, 'gamma', 'Olek also repairs accordions.'));

        await b.close();
        b = undefined;
        assertRefused(await rotateCli(scratch), 'all', [a.child.pid!]);
        // A crash leaves the entry behind; it still counts while its heartbeat is recent.
        await a.stop('SIGKILL');
        assertRefused(await rotateCli(scratch), 'all', [a.child.pid!]);
        // A minute later (the staleness window) it no longer does.
        await scratch.admin("UPDATE connected_engines SET heartbeat_at = heartbeat_at - interval '2 minutes'");
        const rotated = await rotateCli(scratch);
        assert.equal(rotated.code, 0, rotated.stderr);
        assert.match(rotated.stdout, /re-wrapped the data keys of 3 banks \(phase all\)/);
      } finally {
        await a.stop();
        await b?.close();
      }
      await assertReadableAfterRestart(scratch, acked);
    });
  });

  it('an engine taken for gone that still serves the old key creates no bank after the rotation (503, nothing stored); a bank it created just before is re-wrapped', async () => {
    await withScratch('rotation_stale', async (scratch) => {
      const a = await startOn(scratch, OLD);
      const acked: Acked[] = [];
      let refused: Awaited<ReturnType<typeof retain>> | undefined;
      const tool: Database = (await openDatabase({ home: home.path, databaseUrl: scratch.url })).db;
      // Holds the encryption lock, as a rotation or a starting engine does, so the order of what waits is known.
      const holder = new pg.Client({ connectionString: scratch.url });
      await holder.connect();
      try {
        acked.push(await ack(a.url, 'known', 'Tomas keeps bees behind the library.'));
        await holder.query('BEGIN');
        await holder.query('SELECT pg_advisory_xact_lock($1)', [ENCRYPTION_LOCK]);
        const waiters = async (n: number) =>
          waitFor(`${n} sessions waiting for the encryption lock`, async () => {
            const [row] = await scratch.admin<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database
               WHERE l.locktype = 'advisory' AND NOT l.granted AND d.datname = current_database()`,
            );
            return row?.n === n;
          });
        // In this order: a new bank, the rotation (which takes the live engine for gone), another new bank.
        const first = retain(a.url, 'first', 'Tomas sells the honey on Saturdays.');
        await waiters(1);
        const rotation = rotateKey(tool, Buffer.from(OLD, 'base64'), Buffer.from(NEW, 'base64'), 'all', {
          staleAfterMs: 0,
        });
        await waiters(2);
        const second = retain(a.url, 'second', 'Tomas plans a second hive.');
        await waiters(3);
        await holder.query('COMMIT');

        const created = await first;
        assert.equal(created.status, 200, JSON.stringify(created.body));
        acked.push(created.acked!);
        assert.equal((await rotation).banks, 2, 'the rotation saw the bank created before it');
        refused = await second;
        assert.equal(refused.status, 503, JSON.stringify(refused.body));
        assert.equal(refused.body.code, 'database_unavailable');
        assert.match(refused.body.detail ?? '', /^this engine's encryption key is no longer accepted by the database /);
        // Banks whose data key it holds still take its writes: the data keys did not change.
        acked.push(await ack(a.url, 'known', 'Tomas lost a queen in May.'));
      } finally {
        await holder.end();
        await tool.close();
        await a.close();
      }
      await assertReadableAfterRestart(scratch, acked, async (url) => {
        const none = await call<{ total?: number }>(url, 'GET', '/v1/default/banks/second/memories');
        assert.ok(none.status === 404 || none.body.total === 0, `the refused retain stored nothing: ${none.status}`);
      });
    });
  });

  it('phases begin and finish: an old-key engine keeps creating banks between them; finish refuses while it runs; after it stops, every bank reads with the new key after a restart', async () => {
    await withScratch('rotation_phases', async (scratch) => {
      let a: RunningEngine | undefined = await startOn(scratch, OLD);
      let b: RunningEngine | undefined;
      const acked: Acked[] = [];
      try {
        acked.push(await ack(a.url, 'before', 'Mira paints signs for shops.'));
        const begun = await rotateCli(scratch, 'begin');
        assert.equal(begun.code, 0, begun.stderr);
        // Both keys are accepted now: the old-key engine still creates banks, and a new-key engine starts.
        acked.push(await ack(a.url, 'during', 'Mira learned gilding this spring.'));
        b = await startOn(scratch, NEW);
        acked.push(await ack(b.url, 'during-new', 'Mira teaches a lettering class.'));
        // The bank the old-key engine created is wrapped under the old key only until finish: a temporary refusal.
        const early = await retain(b.url, 'during', 'Mira framed her first gilded sign.');
        assert.equal(early.status, 503, JSON.stringify(early.body));
        assert.match(early.body.detail ?? '', /rotate-key --phase finish/);
        const recalled = await call<{ results: unknown[] }>(b.url, 'POST', '/v1/default/banks/during/memories/recall', {
          query: 'What did Mira learn?',
        });
        assert.equal(recalled.status, 200, JSON.stringify(recalled.body));

        assertRefused(await rotateCli(scratch, 'finish'), 'finish', [process.pid]);
        await a.close();
        a = undefined;
        const finished = await rotateCli(scratch, 'finish');
        assert.equal(finished.code, 0, finished.stderr);
      } finally {
        await a?.close();
        await b?.close();
      }
      await assertReadableAfterRestart(scratch, acked);
      await assert.rejects(startOn(scratch, OLD), /^EncryptionKeyMismatchError: encryption_key_mismatch: /);
    });
  });

  it('encrypt-existing refuses while an engine without the key is connected, names it and changes nothing', async () => {
    await withScratch('rotation_encrypt_existing', async (scratch) => {
      const db = (await openDatabase({ home: home.path, databaseUrl: scratch.url })).db;
      try {
        const plaintext = await EngineRegistration.register(db, undefined);
        await assert.rejects(
          encryptExisting(db, Buffer.from(NEW, 'base64')),
          (error: Error & { exitCode?: number }) =>
            error.exitCode === 75 &&
            /^encrypt-existing refused: 1 engine serves this database without the key: /.test(error.message) &&
            error.message.includes(`pid ${process.pid}`) &&
            !error.message.includes('\n'),
        );
        assert.equal(await readRecord(db), undefined, 'the database is still a plaintext one');
        await plaintext.close();
        assert.deepEqual(await encryptExisting(db, Buffer.from(NEW, 'base64')), { encrypted: 0 });
        assert.notEqual(await readRecord(db), undefined);
      } finally {
        await db.close();
      }
    });
  });

  it("an engine's heartbeat keeps its entry fresh and brings it back when removed; close removes it", async () => {
    await withScratch('rotation_heartbeat', async (scratch) => {
      const db = (await openDatabase({ home: home.path, databaseUrl: scratch.url })).db;
      try {
        const listed = () => enginesNotOnKey(db, NEW_FINGERPRINT);
        const entry = await EngineRegistration.register(db, Buffer.from(OLD, 'base64'), { heartbeatMs: 20 });
        const [me] = await listed();
        assert.equal(me?.host, hostname());
        assert.equal(me?.pid, process.pid);
        await scratch.admin("UPDATE connected_engines SET heartbeat_at = heartbeat_at - interval '1 hour'");
        await waitFor('the heartbeat to refresh a stale entry', async () => (await listed()).length === 1);
        await scratch.admin('DELETE FROM connected_engines');
        await waitFor('the heartbeat to bring the entry back', async () => (await listed()).length === 1);
        await entry.close();
        assert.deepEqual(await scratch.admin('SELECT id FROM connected_engines'), []);
      } finally {
        await db.close();
      }
    });
  });
});
