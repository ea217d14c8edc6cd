import assert from 'node:assert/strict';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import { unknownGatewayVariables } from '../src/config.js';
import { entryArgs } from '../../engine/test/helpers/process.js';
import { ADMIN_TOKEN, createTestDatabase } from './helpers.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Starts the gateway's entry point with only `env` (and PATH), stdout and stderr piped. */
function spawnGateway(env: Record<string, string>): ChildProcessByStdio<null, Readable, Readable> {
  return spawn(process.execPath, entryArgs('gateway', 'bin'), {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Runs the gateway's entry point with only `env` (and PATH) and collects its exit code and output. */
function runGateway(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnGateway(env);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((done) => child.once('exit', (code) => done({ code, stdout, stderr })));
}

describe('gateway start-up failures', () => {
  it('names an unknown GATEWAY_* variable with the closest valid one', () => {
    assert.deepEqual(unknownGatewayVariables({ GATEWAY_PORT: '1', GATEWAY_ENGIN_URL: 'x', HOME: '/' }), [
      'GATEWAY_ENGIN_URL is not a gateway setting and is ignored; did you mean GATEWAY_ENGINE_URL?',
    ]);
  });

  it('a bad setting fails in one line without a stack, exit code 78, after warning about the typo', async () => {
    const r = await runGateway({ GATEWAY_PORT: '0', GATEWAY_ENGIN_URL: 'http://127.0.0.1:1' });
    assert.equal(r.code, 78, r.stderr);
    // oidc-provider warns about Node versions older than 22 by itself; the gateway's own lines are counted.
    const lines = r.stderr
      .trim()
      .split('\n')
      .filter((line) => !line.startsWith('oidc-provider WARNING'));
    assert.equal(lines.length, 2, r.stderr);
    assert.match(lines[0]!, /^mnemos gateway: warning: GATEWAY_ENGIN_URL .*did you mean GATEWAY_ENGINE_URL\?/);
    assert.match(lines[1]!, /^mnemos gateway: GATEWAY_DATABASE_URL, .* are required/);

    const debug = await runGateway({ GATEWAY_PORT: '0', GATEWAY_LOG_LEVEL: 'debug' });
    assert.equal(debug.code, 78);
    assert.match(debug.stderr, /\n\s+at /, 'the stack at debug');
  });

  it('names every missing and invalid setting in one line, exit code 78', async () => {
    const r = await runGateway({ GATEWAY_PORT: '0', GATEWAY_LOG_FORMAT: 'xml', GATEWAY_ADMIN_TOKEN: 'short' });
    assert.equal(r.code, 78, r.stderr);
    const lines = r.stderr
      .trim()
      .split('\n')
      .filter((line) => !line.startsWith('oidc-provider WARNING'));
    assert.deepEqual(lines, [
      'mnemos gateway: GATEWAY_DATABASE_URL, GATEWAY_ENGINE_URL, GATEWAY_ENGINE_TOKEN are required; ' +
        'GATEWAY_ADMIN_TOKEN: must be at least 16 characters; ' +
        'GATEWAY_LOG_FORMAT: must be pretty or json (unset: pretty on a terminal, json otherwise).',
    ]);
  });

  it('a port in use fails in one line that names GATEWAY_PORT, exit code 78, and the process exits', async () => {
    const db = await createTestDatabase();
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((blocker.address() as net.AddressInfo).port);
      const r = await runGateway({
        GATEWAY_PORT: port,
        GATEWAY_HOST: '127.0.0.1',
        GATEWAY_DATABASE_URL: db.url,
        GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
        GATEWAY_ENGINE_URL: 'http://127.0.0.1:1',
        GATEWAY_ENGINE_TOKEN: 'engine-token',
      });
      assert.equal(r.code, 78, r.stderr);
      const lines = r.stderr
        .trim()
        .split('\n')
        .filter((line) => !line.startsWith('oidc-provider WARNING'));
      assert.equal(lines.length, 1, r.stderr);
      assert.match(
        lines[0]!,
        new RegExp(`^mnemos gateway: Port 127\\.0\\.0\\.1:${port} is already in use; .*GATEWAY_PORT`),
      );
    } finally {
      blocker.close();
      await db.drop();
    }
  });
});

interface LogLine {
  level: number;
  name: string;
  msg: string;
  url?: string;
  status?: number;
}

/** pino's numeric levels. */
const DEBUG = 20;
const INFO = 30;
const WARN = 40;

describe('gateway logs', () => {
  it('JSON lines when stdout is not a terminal: a warning, one start line, probes at debug, one line per other request, one stop line', async () => {
    const db = await createTestDatabase();
    const child = spawnGateway({
      GATEWAY_PORT: '0',
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_DATABASE_URL: db.url,
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      GATEWAY_ENGINE_URL: 'http://127.0.0.1:1',
      GATEWAY_ENGINE_TOKEN: 'engine-token',
      GATEWAY_LOG_LEVEL: 'debug',
      GATEWAY_LOG_LEVLE: 'debug',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const check = (): void => {
          const match = /gateway listening on (http:\/\/\S+)/.exec(stdout);
          if (match !== null) resolve(match[1]!);
        };
        child.stdout.on('data', check);
        void exited.then(() => reject(new Error(`gateway exited:\n${stdout}\n${stderr}`)));
      });
      for (let i = 0; i < 5; i++) {
        for (const probe of ['/health', '/health/live', '/version']) {
          assert.equal((await fetch(url + probe)).status, 200);
        }
      }
      assert.equal((await fetch(`${url}/v1/me/banks`)).status, 401);
      child.kill('SIGTERM');
      const [code] = await exited;
      assert.equal(code, 0, stderr);

      const lines = stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as LogLine);
      assert.ok(
        lines.every((line) => line.name === 'mnemos-gateway'),
        stdout,
      );
      const [warning] = lines.filter((line) => line.level === WARN);
      assert.match(warning?.msg ?? '', /GATEWAY_LOG_LEVLE .*did you mean GATEWAY_LOG_LEVEL\?/);
      assert.equal(lines.filter((line) => /^gateway listening on /.test(line.msg)).length, 1, stdout);
      assert.deepEqual(
        lines.filter((line) => line.msg === 'request' && line.level === INFO).map((line) => [line.url, line.status]),
        [['/v1/me/banks', 401]],
        'one info line for the one request that is not a probe',
      );
      assert.equal(
        lines.filter((line) => line.msg === 'request' && line.level === DEBUG).length,
        15,
        'one debug line per probe',
      );
      assert.equal(lines.at(-1)?.msg, 'gateway stopped (SIGTERM)', stdout);
      assert.equal(
        stderr.split('\n').filter((line) => line !== '' && !line.startsWith('oidc-provider WARNING')).length,
        0,
        stderr,
      );
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await db.drop();
    }
  });
});
