import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import { unknownGatewayVariables } from '../src/config.js';
import { ADMIN_TOKEN, createTestDatabase } from './helpers.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const BIN = path.resolve(repoRoot, 'packages/gateway/src/bin.ts');

/** Runs the gateway's entry point from source with only `env` (and PATH) and collects its exit code and output. */
function runGateway(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', BIN], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
    assert.match(lines[1]!, /^mnemos gateway: GATEWAY_DATABASE_URL is required/);

    const debug = await runGateway({ GATEWAY_PORT: '0', GATEWAY_LOG_LEVEL: 'debug' });
    assert.equal(debug.code, 78);
    assert.match(debug.stderr, /\n\s+at /, 'the stack at debug');
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
