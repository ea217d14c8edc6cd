// test-runner: long (started first, so the suite does not wait for it at the end)
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { acquireModel } from '../src/embeddings/acquire.js';
import { ModelUnavailableError } from '../src/embeddings/model-error.js';
import { call, MODEL_DIR, tempHome, testEnv } from './helpers/engine.js';
import { startFakeHub } from './helpers/fake-hub.js';
import { PROCESS_LIMIT_MS, runCliToEnd, spawnEngine } from './helpers/process.js';
import { waitUntilReady } from '../src/index.js';

const MODEL_ID = 'Xenova/all-MiniLM-L6-v2';
// The quantized weights (about a quarter of the full ones) keep the transfers short.
const WEIGHTS = 'onnx/model_quantized.onnx';
const WEIGHTS_SIZE = statSync(join(MODEL_DIR, WEIGHTS)).size;

function hubEnv(home: string, hubUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return testEnv(home, {
    MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: MODEL_ID,
    MNEMOS_API_EMBEDDINGS_LOCAL_DTYPE: 'q8',
    MNEMOS_API_EMBEDDINGS_HUB_URL: hubUrl,
    MNEMOS_API_LOG_LEVEL: 'info',
    ...extra,
  });
}

/** An address where nothing listens: a server's port, closed again. */
async function closedAddress(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

/** Polls /health until its answer satisfies `seen` (within the process limit) and returns that answer. */
async function healthWhile(
  url: string,
  seen: (body: Record<string, unknown>) => boolean,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const deadline = Date.now() + PROCESS_LIMIT_MS;
  for (;;) {
    const answer = await call(url, 'GET', '/health');
    if (seen(answer.body)) return answer;
    if (Date.now() > deadline) assert.fail(`/health never matched; last answer ${JSON.stringify(answer.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const FIXES = new RegExp(
  'fix: let this machine reach the hub or set MNEMOS_API_EMBEDDINGS_HUB_URL to a mirror, ' +
    'or copy the model to a folder and set MNEMOS_API_EMBEDDINGS_LOCAL_MODEL=/path/to/all-MiniLM-L6-v2\\.$',
);

describe('first start downloads the model from the hub', () => {
  it('continues a cut download on the next start, comes up, and later starts without the network', async () => {
    const home = tempHome();
    const weightsPath = join(home.path, 'models', MODEL_ID, WEIGHTS);
    const cutting = await startFakeHub(MODEL_DIR, { cut: { file: WEIGHTS, times: 3 } });
    let partial = 0;
    try {
      // Every try of the first start is cut half-way: it fails with the one line, keeping what it has.
      const first = await runCliToEnd(['serve'], hubEnv(home.path, cutting.url));
      assert.equal(first.code, 78, first.stderr);
      const lines = first.stderr.trim().split('\n');
      assert.equal(lines.length, 1, first.stderr);
      assert.match(
        lines[0]!,
        new RegExp(
          `^mnemos: cannot download the embedding model ${MODEL_ID} ` +
            `from ${cutting.url}/${MODEL_ID}/resolve/main/${WEIGHTS} \\(`,
        ),
      );
      assert.match(lines[0]!, FIXES);
      assert.match(
        first.stdout,
        new RegExp(
          'downloading model Xenova/all-MiniLM-L6-v2 onnx/model_quantized\\.onnx ' +
            '\\[#*\\.*\\] \\d+% [\\d.]+ MB of 21\\.9 MB at [\\d.]+ (MB|kB)/s',
        ),
      );
      // Within the start, each retry continued where the cut left the file.
      const tries = cutting.requests.filter((r) => r.file === WEIGHTS).map((r) => r.range);
      assert.equal(tries.length, 3);
      assert.equal(tries[0], undefined);
      const resumedAt = tries.slice(1).map((range) => Number(/^bytes=(\d+)-$/.exec(range ?? '')?.[1]));
      assert.ok(
        resumedAt[0]! > 0 && resumedAt[0]! <= WEIGHTS_SIZE / 2 && resumedAt[1]! > resumedAt[0]!,
        tries.join(' '),
      );
      assert.equal(existsSync(weightsPath), false, 'a partial file is never under the real name');
      partial = statSync(`${weightsPath}.part`).size;
      assert.ok(partial > WEIGHTS_SIZE / 2 && partial < WEIGHTS_SIZE, `partial ${partial} of ${WEIGHTS_SIZE}`);
    } finally {
      await cutting.close();
    }

    let release = (): void => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const hub = await startFakeHub(MODEL_DIR, { hold: { file: WEIGHTS, until: released } });
    try {
      const second = await spawnEngine(hubEnv(home.path, hub.url), undefined, { ready: false });
      try {
        // While the weights arrive the engine is live, and /health says it is downloading and how far it is.
        const warming = await healthWhile(second.url, (body) => body['stage'] === 'downloading model');
        assert.equal(warming.status, 503);
        assert.equal(warming.body['code'], 'warming');
        const progress = Number(warming.body['progress']);
        assert.ok(progress > 0 && progress < 1, `progress ${String(warming.body['progress'])}`);
        assert.equal((await call(second.url, 'GET', '/health/live')).status, 200);
        release();
        await waitUntilReady(second.url, PROCESS_LIMIT_MS);
        assert.equal((await call(second.url, 'GET', '/health')).status, 200);
        // Only the weights were missing; they continue from the partial file's end.
        assert.deepEqual(hub.requests, [{ file: WEIGHTS, range: `bytes=${partial}-` }]);
        assert.equal(statSync(weightsPath).size, WEIGHTS_SIZE);
        assert.equal(existsSync(`${weightsPath}.part`), false);
        const stored = await call<{ memory_ids: string[] }>(second.url, 'POST', '/v1/default/banks/boot/memories', {
          content: 'Imre keeps bees on the roof.',
        });
        assert.equal(stored.status, 200);
        const found = await call<{ results: Array<{ id: string }> }>(
          second.url,
          'POST',
          '/v1/default/banks/boot/memories/recall',
          { query: 'Who keeps bees?' },
        );
        assert.equal(found.body.results[0]?.id, stored.body.memory_ids[0]);
      } finally {
        assert.equal(await second.stop(), 0);
      }
    } finally {
      await hub.close();
    }

    try {
      // With every file in place the hub is never asked: an unreachable one does not matter.
      const third = await spawnEngine(hubEnv(home.path, await closedAddress()));
      try {
        const found = await call<{ results: Array<{ text: string }> }>(
          third.url,
          'POST',
          '/v1/default/banks/boot/memories/recall',
          { query: 'Who keeps bees?' },
        );
        assert.equal(found.body.results[0]?.text, 'Imre keeps bees on the roof.');
      } finally {
        await third.stop();
      }
    } finally {
      home.remove();
    }
  });

  it('an unreachable hub fails at once: one line with the model, the address, the error, both fixes', async () => {
    const home = tempHome();
    try {
      const hubUrl = await closedAddress();
      const r = await runCliToEnd(['serve'], hubEnv(home.path, hubUrl, { MNEMOS_API_LOG_LEVEL: 'warn' }));
      assert.equal(r.code, 78, r.stderr);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(
        r.stderr.trim(),
        new RegExp(
          `^mnemos: cannot download the embedding model ${MODEL_ID} ` +
            `from ${hubUrl}/${MODEL_ID}/resolve/main/config\\.json ` +
            '\\(fetch failed: connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+\\); ',
        ),
      );
      assert.match(r.stderr.trim(), FIXES);
    } finally {
      home.remove();
    }
  });

  it('refuses a damaged weights file with a clear message and leaves nothing to be taken for the model', async () => {
    const home = tempHome();
    const hub = await startFakeHub(MODEL_DIR, { corrupt: WEIGHTS });
    const modelsDir = join(home.path, 'models');
    try {
      const acquiring = acquireModel({
        model: MODEL_ID,
        modelsDir,
        hubUrl: hub.url,
        dtype: 'q8',
        log: () => undefined,
      });
      await assert.rejects(acquiring, (error: Error) => {
        assert.ok(error instanceof ModelUnavailableError);
        assert.equal(error.exitCode, 78);
        assert.match(
          error.message,
          new RegExp(
            `^the embedding model file ${WEIGHTS} downloaded from ${hub.url}/${MODEL_ID}/resolve/main/${WEIGHTS} ` +
              'is damaged \\(ONNX Runtime cannot load it: .+\\); ' +
              'it was deleted and is downloaded again on the next start; ',
          ),
        );
        assert.match(error.message, FIXES);
        return true;
      });
      const weightsPath = join(modelsDir, MODEL_ID, WEIGHTS);
      assert.equal(existsSync(weightsPath), false);
      assert.equal(existsSync(`${weightsPath}.part`), false);
      // The files that verified stay: the next start asks only for the weights.
      assert.deepEqual(readdirSync(join(modelsDir, MODEL_ID)).sort(), [
        'config.json',
        'onnx',
        'tokenizer.json',
        'tokenizer_config.json',
      ]);
    } finally {
      await hub.close();
      home.remove();
    }
  });

  it('refuses a damaged JSON file, and a file the hub does not have without retrying the 404', async () => {
    const home = tempHome();
    const hub = await startFakeHub(MODEL_DIR, { corrupt: 'tokenizer.json' });
    const modelsDir = join(home.path, 'models');
    try {
      await assert.rejects(
        acquireModel({ model: MODEL_ID, modelsDir, hubUrl: hub.url, dtype: 'q8', log: () => undefined }),
        new RegExp(`: the embedding model file tokenizer\\.json downloaded from .+ is damaged \\(not valid JSON\\); `),
      );
      await assert.rejects(
        acquireModel({
          model: 'Xenova/no-such-model',
          modelsDir,
          hubUrl: `${hub.url}/missing`,
          dtype: 'q8',
          log: () => undefined,
        }),
        new RegExp(
          ': cannot download the embedding model Xenova/no-such-model from .+/config\\.json ' +
            '\\(the server answered 404 Not Found\\); fix: ',
        ),
      );
      assert.equal(hub.requests.filter((r) => r.file.startsWith('/missing')).length, 1);
    } finally {
      await hub.close();
      home.remove();
    }
  });

  it('starts a file over when its partial copy cannot be continued (the hub answers 416)', async () => {
    const home = tempHome();
    const hub = await startFakeHub(MODEL_DIR);
    const folder = join(home.path, 'models', MODEL_ID);
    try {
      mkdirSync(folder, { recursive: true });
      const configSize = statSync(join(MODEL_DIR, 'config.json')).size;
      writeFileSync(join(folder, 'config.json.part'), 'x'.repeat(configSize + 10));
      const lines: string[] = [];
      const progress: number[] = [];
      await acquireModel({
        model: MODEL_ID,
        modelsDir: join(home.path, 'models'),
        hubUrl: hub.url,
        dtype: 'q8',
        log: (line) => lines.push(line),
        onProgress: (stage, fraction) => {
          assert.equal(stage, 'downloading model');
          progress.push(fraction);
        },
      });
      const configTries = hub.requests.filter((r) => r.file === 'config.json').map((r) => r.range);
      assert.deepEqual(configTries, [`bytes=${configSize + 10}-`, undefined]);
      const config = readFileSync(join(folder, 'config.json'), 'utf8');
      assert.equal(config, readFileSync(join(MODEL_DIR, 'config.json'), 'utf8'));
      // Progress covers the weights from the first bytes to all of them, never going back.
      assert.equal(progress.at(-1), 1);
      assert.ok(progress.every((p, i) => i === 0 || p >= progress[i - 1]!));
      assert.ok(
        lines.some((line) => line === `downloaded ${MODEL_ID} ${WEIGHTS} (21.9 MB)`),
        lines.join('\n'),
      );
    } finally {
      await hub.close();
      home.remove();
    }
  });
});
