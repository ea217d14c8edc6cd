import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cpuPerRequestByThread, perThreadCpuSeconds, threadCpuSeconds } from '../bench/process-stats.js';

test('bench process stats: CPU per request by thread, main first, the busiest others next, idle ones left out', () => {
  const before = new Map([
    [100, 1.0],
    [101, 0.5],
    [102, 2.0],
    [103, 0.0],
  ]);
  const after = new Map([
    [100, 3.0],
    [101, 0.501],
    [102, 6.0],
    [103, 1.0],
    [104, 0.5], // started during the run
  ]);
  const byThread = cpuPerRequestByThread(100, before, after, 1000);
  assert.equal(byThread.main, 2);
  assert.deepEqual(byThread.others, [4, 1, 0.5]);
});

test("bench process stats: this process's threads add up to its main and other threads", () => {
  const threads = perThreadCpuSeconds(process.pid);
  assert.ok(threads.has(process.pid), 'the main thread is listed');
  const { main, others } = threadCpuSeconds(process.pid);
  const total = [...perThreadCpuSeconds(process.pid).values()].reduce((a, b) => a + b, 0);
  assert.ok(main > 0);
  assert.ok(Math.abs(main + others - total) < 0.05, `${main} + ${others} against ${total}`);
});
