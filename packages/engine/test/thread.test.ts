// The one worker-thread mechanism (util/thread.ts) on a small sample thread; the embedding model, the embedded
// database and the LLM transport are tested through it in their own files.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SMALL_YOUNG_GENERATION, ThreadClient } from '../src/util/thread.js';
import type { SampleThread } from './helpers/sample-thread.js';

/** Threads start on a module beside a caller's file; the sample module is its own neighbour. */
const SAMPLE = new URL('./helpers/sample-thread.ts', import.meta.url).href;
const stopped = (code: number) => new Error(`the sample thread stopped (exit code ${code})`);

describe('worker-thread calls', () => {
  it('calls made before the thread opens wait for it; answers, buffers and errors cross intact', async () => {
    const events: string[] = [];
    const thread = new ThreadClient<SampleThread, string>(SAMPLE, 'sample-thread', {
      data: { failToOpen: false, openAfterMs: 200 },
      onEvent: (event) => events.push(event),
      stopped,
    });
    try {
      // Sent at once, answered once the thread has opened.
      assert.equal(await thread.call('double', [21]), 42);
      assert.deepEqual(events, ['opening']);
      const sent = Uint8Array.of(1, 2, 3);
      const back = await thread.call('reverse', [sent], [sent.buffer]);
      assert.deepEqual([...back], [3, 2, 1]);
      assert.equal(sent.byteLength, 0, 'the argument buffer moved to the thread');
      await assert.rejects(thread.call('fail', []), (e: Error & { code?: string; detail?: string }) => {
        assert.equal(e.message, 'duplicate key');
        assert.equal(e.code, '23505');
        assert.equal(e.detail, 'Key (n)=(1) already exists.');
        return true;
      });
    } finally {
      await thread.terminate();
    }
    await assert.rejects(thread.call('double', [1]), /the thread was stopped/);
  });

  it('a thread that stops fails the waiting call and every later one with the reason', async () => {
    const thread = await ThreadClient.start<SampleThread>(SAMPLE, 'sample-thread', {
      data: { failToOpen: false, openAfterMs: 0 },
      stopped,
    });
    await assert.rejects(thread.call('stop', []), /sample thread stopped \(exit code 3\)/);
    await assert.rejects(thread.call('double', [1]), /sample thread stopped \(exit code 3\)/);
    assert.match(thread.failed?.message ?? '', /exit code 3/);
  });

  it('a thread that cannot open rejects its start with its own error', async () => {
    await assert.rejects(
      ThreadClient.start<SampleThread>(SAMPLE, 'sample-thread', {
        data: { failToOpen: true, openAfterMs: 0 },
        stopped,
      }),
      /the sample thread could not open/,
    );
  });

  it('a thread started with heap limits runs with them, and one started without keeps the defaults', async () => {
    const start = (resourceLimits?: typeof SMALL_YOUNG_GENERATION) =>
      ThreadClient.start<SampleThread>(SAMPLE, 'sample-thread', {
        data: { failToOpen: false, openAfterMs: 0 },
        stopped,
        ...(resourceLimits ? { resourceLimits } : {}),
      });
    const small = await start(SMALL_YOUNG_GENERATION);
    const plain = await start();
    try {
      const smallLimits = await small.call('limits', []);
      const plainLimits = await plain.call('limits', []);
      assert.equal(smallLimits.maxYoungGenerationSizeMb, SMALL_YOUNG_GENERATION.maxYoungGenerationSizeMb);
      assert.ok((plainLimits.maxYoungGenerationSizeMb ?? 0) > (smallLimits.maxYoungGenerationSizeMb ?? Infinity));
    } finally {
      await small.terminate();
      await plain.terminate();
    }
  });
});
