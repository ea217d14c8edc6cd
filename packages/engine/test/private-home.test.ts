import assert from 'node:assert/strict';
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startEngine } from '../src/index.js';
import { call, MODEL_DIR, tempHome, testEnv } from './helpers/engine.js';
import { startFakeHub } from './helpers/fake-hub.js';

// The usual umask, under which the embedded database used to leave nearly all of its files writable by every user.
process.umask(0o022);

/** Every file and folder at or below `path` as `mode path`, with its permission bits in octal. */
function modes(path: string): string[] {
  const stat = lstatSync(path);
  const line = `${(stat.mode & 0o777).toString(8)} ${path}`;
  if (!stat.isDirectory()) return [line];
  return [line, ...readdirSync(path).flatMap((name) => modes(join(path, name)))];
}

describe("what the engine keeps under MNEMOS_HOME is its user's alone", () => {
  it('after a start, the database (also files it creates while running), the model cache and the lock are 0600 files in 0700 folders', async () => {
    // The home holds a database as initdb (and every earlier release) wrote it: files 0666.
    const home = tempHome('mnemos-private-', { database: 'initdb' });
    const hub = await startFakeHub(MODEL_DIR);
    const running = await startEngine({
      env: testEnv(home.path, {
        MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: 'Xenova/all-MiniLM-L6-v2',
        MNEMOS_API_EMBEDDINGS_LOCAL_DTYPE: 'q8',
        MNEMOS_API_EMBEDDINGS_HUB_URL: hub.url,
      }),
    });
    try {
      const stored = await call(running.url, 'POST', '/v1/default/banks/modes/memories', {
        content: 'Ines keeps her passwords in a paper notebook.',
      });
      assert.equal(stored.status, 200);
      // New relation files and a checkpoint: what the database writes after it opened.
      await running.engine.db.exec(
        'CREATE TABLE mode_probe (x integer); INSERT INTO mode_probe VALUES (1); CHECKPOINT',
      );
      const db = modes(join(home.path, 'db'));
      const models = modes(join(home.path, 'models'));
      // Not a vacuous pass: the whole database and the downloaded weights are there.
      assert.ok(db.length > 900, `${db.length} database entries`);
      assert.ok(models.some((m) => m.endsWith('/onnx/model_quantized.onnx')));
      const shared = [...db, ...models, ...modes(join(home.path, 'db.lock'))].filter((line) => {
        const [mode, path] = line.split(' ') as [string, string];
        return mode !== (lstatSync(path).isDirectory() ? '700' : '600');
      });
      assert.deepEqual(shared, []);
    } finally {
      await running.close();
      await hub.close();
      home.remove();
    }
  });
});
