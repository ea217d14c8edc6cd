// test-runner: long (started first, so the suite does not wait for it at the end)
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startEngine } from '../src/index.js';
import { call, sharedLocalModel, tempHome, testEnv } from './helpers/engine.js';
import { runCliToEnd } from './helpers/process.js';

/** The key-management commands through the real CLI on an embedded database: encrypt-existing, then rotate-key. */

const KEY = Buffer.alloc(32, 3).toString('base64');
const NEW_KEY = Buffer.alloc(32, 4).toString('base64');
const home = tempHome();
after(() => home.remove());

describe('mnemos encrypt-existing and rotate-key', () => {
  it('encrypts a plaintext database, rotates its key, and the engine recalls with the new key only', async () => {
    const plain = await startEngine({ env: testEnv(home.path), engine: { model: await sharedLocalModel() } });
    const r = await call(plain.url, 'POST', '/v1/default/banks/carol/memories', {
      content: 'Carol grows tomatoes on her balcony.',
    });
    assert.equal(r.status, 200);
    await plain.close();

    const enc = await runCliToEnd(['encrypt-existing'], testEnv(home.path, { MNEMOS_API_ENCRYPTION_MASTER_KEY: KEY }));
    assert.equal(enc.code, 0, enc.stderr);
    assert.match(enc.stdout, /encrypted 1 memories/);

    const short = await runCliToEnd(
      ['rotate-key'],
      testEnv(home.path, { MNEMOS_API_ENCRYPTION_MASTER_KEY: KEY, MNEMOS_API_ENCRYPTION_NEW_MASTER_KEY: 'c2hvcnQ=' }),
    );
    assert.equal(short.code, 78, 'a bad key is a configuration error');
    assert.match(
      short.stderr,
      /^mnemos: MNEMOS_API_ENCRYPTION_NEW_MASTER_KEY \(or --new-key\) must decode to exactly 32 bytes/,
    );
    assert.equal(short.stderr.trim().split('\n').length, 1);

    const wrong = await runCliToEnd(
      ['rotate-key'],
      testEnv(home.path, { MNEMOS_API_ENCRYPTION_MASTER_KEY: NEW_KEY, MNEMOS_API_ENCRYPTION_NEW_MASTER_KEY: KEY }),
    );
    assert.equal(wrong.code, 78, 'a wrong key is a configuration error');
    assert.match(wrong.stderr, /^mnemos: encryption_key_mismatch: /);

    const rotated = await runCliToEnd(
      ['rotate-key'],
      testEnv(home.path, { MNEMOS_API_ENCRYPTION_MASTER_KEY: KEY, MNEMOS_API_ENCRYPTION_NEW_MASTER_KEY: NEW_KEY }),
    );
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.match(rotated.stdout, /re-wrapped the data keys of 1 banks/);

    const old = await runCliToEnd(['serve'], testEnv(home.path, { MNEMOS_API_ENCRYPTION_MASTER_KEY: KEY }));
    assert.equal(old.code, 78, 'a wrong key is a configuration error');
    assert.match(old.stderr, /^mnemos: encryption_key_mismatch: /);
    assert.equal(old.stderr.trim().split('\n').length, 1);

    const none = await runCliToEnd(['serve'], testEnv(home.path));
    assert.equal(none.code, 78, 'a missing key is a configuration error');
    assert.match(
      none.stderr,
      /^mnemos: This database is encrypted at rest but MNEMOS_API_ENCRYPTION_MASTER_KEY is not set/,
    );
    assert.equal(none.stderr.trim().split('\n').length, 1);

    const engine = await startEngine({
      env: testEnv(home.path, { MNEMOS_API_ENCRYPTION_MASTER_KEY: NEW_KEY }),
      engine: { model: await sharedLocalModel() },
    });
    try {
      const found = await call<{ results: Array<{ text: string }> }>(
        engine.url,
        'POST',
        '/v1/default/banks/carol/memories/recall',
        { query: 'What does Carol grow?' },
      );
      assert.equal(found.body.results[0]?.text, 'Carol grows tomatoes on her balcony.');
    } finally {
      await engine.close();
    }
  });
});
