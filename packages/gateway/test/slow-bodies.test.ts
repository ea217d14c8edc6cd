// test-runner: long (started first, so the suite does not wait for it at the end)
// Slow uploads in bulk against the engine and the gateway, each in its own process: bodies that stall get a 408 once
// the (short, injected) request timeout passes, bodies over the in-flight budget get a 503 with Retry-After at once,
// and a second storm leaves the server's memory where the first left it and its descriptors at their baseline.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { testHomesRoot } from '../../engine/test/helpers/homes-root.js';
import { seedEmbeddedDatabase } from '../../engine/test/helpers/pristine-database.js';
import { CLI_COMMAND, entryArgs } from '../../engine/test/helpers/process.js';
import {
  ADMIN_TOKEN,
  ENGINE_TOKEN,
  MODEL_DIR,
  createTestDatabase,
  setupProject,
  type TestDatabase,
} from './helpers.js';

const CONNECTIONS = 1_000;
const DECLARED_BYTES = 1024 * 1024;
const SENT_BYTES = 256 * 1024;
const INFLIGHT_BUDGET = 32 * 1024 * 1024;
const REQUEST_TIMEOUT_MS = 2_000;
const HEADERS_TIMEOUT_MS = 1_000;
/** A slow client gives up after this; generous, so it only fires when the server never answers. */
const CLIENT_GIVE_UP_MS = 45_000;

interface ServerProcess {
  url: string;
  pid: number;
  /**
   * Where the server's embedded database keeps its files, if it has one. Postgres keeps a relation's file open once
   * read (up to its max_files_per_process), and background work may read a relation first during a storm: those
   * descriptors are the database's cache, not connections left open, so they are left out of the count.
   */
  databaseDir?: string;
  stop(): Promise<void>;
}

/**
 * Runs the gateway in its own process, so its memory is measured apart from the test client's, with one malloc arena
 * as the image runs it (the engine's process gets the same from spawnEngineProcess): with an arena per thread, glibc
 * keeps what the threads freed, and the resident memory this test compares says little about the gateway's own.
 */
function spawnGatewayProcess(env: Record<string, string>): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, entryArgs('gateway', 'bin'), {
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', MALLOC_ARENA_MAX: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((done, fail) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = /gateway listening on (http:\/\/\S+)/.exec(output);
      if (match === null || child.pid === undefined) return;
      done({
        url: match[1] ?? '',
        pid: child.pid,
        stop: () =>
          new Promise<void>((stopped) => {
            if (child.exitCode !== null) {
              stopped();
              return;
            }
            child.once('exit', () => stopped());
            child.kill('SIGTERM');
          }),
      });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => fail(new Error(`gateway exited with ${code}:\n${output}`)));
  });
}

async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb) * 1024;
}

/** What each open descriptor points at (a file, `socket:[inode]`, `anon_inode:[eventfd]`...), by descriptor number. */
async function openDescriptors(server: ServerProcess): Promise<Map<string, string>> {
  const described = new Map<string, string>();
  for (const fd of await readdir(`/proc/${server.pid}/fd`)) {
    const target = await readlink(`/proc/${server.pid}/fd/${fd}`).catch(() => undefined);
    if (target === undefined) continue;
    if (server.databaseDir !== undefined && target.startsWith(server.databaseDir + path.sep)) continue;
    described.set(fd, target);
  }
  return described;
}

/** The descriptors open now that were not at the baseline, so a failure says what was left open. */
function addedDescriptors(baseline: Map<string, string>, now: Map<string, string>): string {
  return [...now]
    .filter(([fd, target]) => baseline.get(fd) !== target)
    .map(([fd, target]) => `${fd} -> ${target}`)
    .join(', ');
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls until `value` stops moving (two readings a second apart within 2 %), within a generous deadline. */
async function settled(read: () => Promise<number>, deadlineMs = 30_000): Promise<number> {
  const end = Date.now() + deadlineMs;
  let last = await read();
  while (Date.now() < end) {
    await sleep(1_000);
    const now = await read();
    if (Math.abs(now - last) <= last * 0.02) return now;
    last = now;
  }
  return last;
}

/** Polls until `ok(value)` holds or the deadline passes; answers the last value. */
async function until(read: () => Promise<number>, ok: (v: number) => boolean, deadlineMs = 90_000): Promise<number> {
  const end = Date.now() + deadlineMs;
  let value = await read();
  while (!ok(value) && Date.now() < end) {
    await sleep(500);
    value = await read();
  }
  return value;
}

interface SlowOutcome {
  /** Status of the server's answer, 0 when it closed without one, -1 when the client gave up waiting. */
  status: number;
  headers: string;
}

/**
 * One slow upload: declares a large body, sends part of it in a few pieces, then stalls (`stall`) or closes. Resolves
 * when the connection is closed, with the server's answer if it gave one. The part is sent well within the request
 * timeout: a server that closes a connection while the client still sends resets it, and the answer is lost.
 */
function slowUpload(url: URL, requestPath: string, auth: string, stall: boolean): Promise<SlowOutcome> {
  return new Promise((done) => {
    const socket = connect(Number(url.port), url.hostname);
    let received = '';
    let finished = false;
    const finish = (status: number): void => {
      if (finished) return;
      finished = true;
      clearTimeout(giveUp);
      socket.destroy();
      const headers = received.split('\r\n\r\n')[0] ?? '';
      done({ status, headers });
    };
    const giveUp = setTimeout(() => finish(-1), CLIENT_GIVE_UP_MS);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => finish(Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0)));
    socket.on('connect', () => {
      socket.write(
        `POST ${requestPath} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${auth}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${DECLARED_BYTES}\r\n\r\n{"content":"`,
      );
      const piece = Buffer.alloc(SENT_BYTES / 4, 'a');
      let sent = 0;
      const writeMore = (): void => {
        if (socket.destroyed || finished) return;
        if (sent >= SENT_BYTES) {
          if (!stall) socket.destroy();
          return;
        }
        sent += piece.length;
        socket.write(piece);
        setTimeout(writeMore, 50);
      };
      writeMore();
    });
  });
}

/** Starts slow uploads in waves (so the accept queue never overflows) and waits for all of them. */
async function slowUploads(
  base: string,
  requestPath: string,
  auth: string,
  connections: number,
): Promise<SlowOutcome[]> {
  const url = new URL(base);
  const all: Array<Promise<SlowOutcome>> = [];
  for (let i = 0; i < connections; i++) {
    all.push(slowUpload(url, requestPath, auth, i % 2 === 0));
    if (i % 100 === 99) await sleep(100);
  }
  return Promise.all(all);
}

async function checkRecovers(server: ServerProcess, requestPath: string, auth: string): Promise<void> {
  // A small round first, so code loaded and compiled on first use is part of the baseline.
  await slowUploads(server.url, requestPath, auth, CONNECTIONS / 10);
  const baseline = await openDescriptors(server);
  const baseFds = baseline.size;

  const outcomes = await slowUploads(server.url, requestPath, auth, CONNECTIONS);
  checkRefusals(outcomes);
  // The first storm sets the allocator's high-water mark, which depends on how many uploads a loaded machine lets in
  // at once; a leak is what a second storm of the same size adds on top of it.
  const afterFirst = await settled(() => rssBytes(server.pid));
  checkRefusals(await slowUploads(server.url, requestPath, auth, CONNECTIONS));
  const rss = await until(
    () => rssBytes(server.pid),
    (v) => v <= afterFirst * 1.1,
  );
  const mb = (bytes: number): number => Math.round(bytes / 1e6);
  assert.ok(
    rss <= afterFirst * 1.1,
    `RSS ${mb(rss)} MB after a second storm is within 10 % of ${mb(afterFirst)} MB after the first`,
  );
  const fds = await until(
    async () => (await openDescriptors(server)).size,
    (v) => v <= baseFds + 2,
  );
  if (fds > baseFds + 2) {
    const added = addedDescriptors(baseline, await openDescriptors(server));
    assert.fail(`descriptors ${fds} return to their baseline ${baseFds}; open beyond it: ${added}`);
  }
  // Still serving.
  assert.equal((await fetch(`${server.url}/health/live`)).status, 200);
}

function checkRefusals(outcomes: SlowOutcome[]): void {
  const count = (pred: (o: SlowOutcome) => boolean): number => outcomes.filter(pred).length;
  const stalled = outcomes.filter((_, i) => i % 2 === 0);
  const busy = outcomes.filter((o) => o.status === 503);
  const timedOut = outcomes.filter((o) => o.status === 408);
  assert.equal(
    count((o) => o.status === -1),
    0,
    'every slow upload is answered or closed by the server',
  );
  assert.deepEqual(
    stalled.filter((o) => o.status !== 408 && o.status !== 503).map((o) => o.status),
    [],
    'every stalled upload is refused (503) or timed out (408)',
  );
  assert.ok(busy.length > 0, 'uploads over the in-flight budget are refused');
  assert.ok(timedOut.length > 0, 'admitted uploads that stall time out');
  for (const o of [...busy.slice(0, 20), ...timedOut.slice(0, 20)]) {
    assert.match(o.headers, /\r\ncontent-type: application\/problem\+json/i);
  }
  for (const o of busy.slice(0, 20)) assert.match(o.headers, /\r\nretry-after: \d+/i);
}

const limitsEnv = (prefix: string): Record<string, string> => ({
  [`${prefix}_REQUEST_TIMEOUT_MS`]: String(REQUEST_TIMEOUT_MS),
  [`${prefix}_HEADERS_TIMEOUT_MS`]: String(HEADERS_TIMEOUT_MS),
  [`${prefix}_MAX_INFLIGHT_BODY_BYTES`]: String(INFLIGHT_BUDGET),
});

describe('slow request bodies in bulk', { timeout: 300_000 }, () => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  });

  it('the engine answers 408 or 503, keeps its memory through a second storm and returns to its baseline descriptors', async () => {
    const home = await mkdtemp(path.join(testHomesRoot(), 'mnemos-slow-'));
    seedEmbeddedDatabase(home);
    cleanups.push(() => rm(home, { recursive: true, force: true }));
    const { spawnEngineProcess } = await import('@mnemos/engine');
    const engine = await spawnEngineProcess(
      {
        MNEMOS_HOME: home,
        MNEMOS_API_AUTH_TOKEN: ENGINE_TOKEN,
        MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: MODEL_DIR,
        MNEMOS_API_PORT: '0',
        MNEMOS_API_HOST: '127.0.0.1',
        ...limitsEnv('MNEMOS_API'),
      },
      // The compiled CLI when the build is current (see entryArgs), the source otherwise.
      CLI_COMMAND.at(-1),
    );
    const pid = engine.child.pid;
    assert.ok(pid !== undefined);
    cleanups.push(() => engine.stop());
    await checkRecovers(
      { url: engine.url, pid, stop: () => engine.stop(), databaseDir: path.join(home, 'db') },
      '/v1/t1/banks/b/memories',
      ENGINE_TOKEN,
    );
  });

  it('the gateway answers 408 or 503, keeps its memory through a second storm and returns to its baseline descriptors', async () => {
    const db: TestDatabase = await createTestDatabase();
    cleanups.push(() => db.drop());
    const gateway = await spawnGatewayProcess({
      GATEWAY_DATABASE_URL: db.url,
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      // Never reached: no slow upload completes.
      GATEWAY_ENGINE_URL: 'http://127.0.0.1:9',
      GATEWAY_ENGINE_TOKEN: ENGINE_TOKEN,
      GATEWAY_PORT: '0',
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_LOG_LEVEL: 'silent',
      ...limitsEnv('GATEWAY'),
    });
    cleanups.push(() => gateway.stop());
    // Every admitted upload counts against the key's request rate before its body is read, and on a slow machine the
    // waves spread out, so more of them are admitted than the free plan's 600 a minute: the scale plan's rate keeps the
    // rate limiter (tested in ratelimit.test.ts) out of what this test measures.
    const { key } = await setupProject(gateway.url, { plan: 'scale' });
    await checkRecovers(gateway, '/v1/me/banks/b/memories', key);
  });
});
