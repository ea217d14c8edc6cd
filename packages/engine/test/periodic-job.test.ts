// PeriodicJob, the shape of the engine's background upkeep (expiry, tombstone pruning): ticks come from an injected
// scheduler, so the test decides when a tick happens instead of waiting for a timer.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PeriodicJob, type PeriodicWork, type Scheduler } from '../src/util/periodic-job.js';

/** A scheduler the test ticks by hand; it records the interval asked for and whether the job cancelled it. */
function manualScheduler() {
  const state = { tick: undefined as (() => void) | undefined, everyMs: 0, cancelled: false };
  const scheduler: Scheduler = (tick, everyMs) => {
    state.tick = tick;
    state.everyMs = everyMs;
    return () => {
      state.cancelled = true;
    };
  };
  return { state, scheduler, tick: () => state.tick!() };
}

/** A step the test releases one at a time; `full` says what each step answers. */
function heldSteps(full: () => boolean) {
  const waiting: Array<() => void> = [];
  let calls = 0;
  const step = async () => {
    calls++;
    await new Promise<void>((resolve) => waiting.push(resolve));
    return full();
  };
  const release = async () => {
    while (waiting.length === 0) await new Promise((r) => setImmediate(r));
    waiting.shift()!();
  };
  return { step, release, calls: () => calls };
}

function job(work: Partial<PeriodicWork> & Pick<PeriodicWork, 'step' | 'scheduler'>, errors: unknown[] = []) {
  return new PeriodicJob({
    everyMs: 1_000,
    stepsPerRun: 3,
    runAtStart: false,
    onError: (e) => errors.push(e),
    ...work,
  });
}

describe('PeriodicJob', () => {
  it('runs at each tick, at start only when asked, and no further than stepsPerRun full steps a run', async () => {
    const clock = manualScheduler();
    let steps = 0;
    const lazy = job({ step: async () => (steps++, true), scheduler: clock.scheduler });
    lazy.start();
    await lazy.idle();
    assert.equal(steps, 0, 'no run before the first tick');
    assert.equal(clock.state.everyMs, 1_000);
    clock.tick();
    await lazy.idle();
    assert.equal(steps, 3, 'a run of full steps stops at stepsPerRun');
    clock.tick();
    await lazy.idle();
    assert.equal(steps, 6, 'the backlog goes on at the next tick');
    await lazy.stop();

    let eager = 0;
    const atStart = job({
      step: async () => (eager++, false),
      runAtStart: true,
      scheduler: manualScheduler().scheduler,
    });
    atStart.start();
    await atStart.idle();
    assert.equal(eager, 1, 'a step that is not full ends the run');
    await atStart.stop();
  });

  it('skips a tick while a run is going, and stop cancels the schedule, waits for the run and ends it early', async () => {
    const clock = manualScheduler();
    const held = heldSteps(() => true);
    const running = job({ step: held.step, scheduler: clock.scheduler });
    running.start();
    clock.tick();
    clock.tick();
    await held.release();
    await new Promise((r) => setImmediate(r));
    assert.equal(held.calls(), 2, 'the second tick did not start a second run beside the first');
    let stopped = false;
    const stopping = running.stop().then(() => (stopped = true));
    assert.equal(clock.state.cancelled, true);
    await new Promise((r) => setImmediate(r));
    assert.equal(stopped, false, 'stop waits for the step in progress');
    await held.release();
    await stopping;
    assert.equal(held.calls(), 2, 'a stopped job takes no further step');
  });

  it('reports a failed run and runs again at the next tick', async () => {
    const clock = manualScheduler();
    const errors: unknown[] = [];
    let calls = 0;
    const failing = job(
      {
        step: async () => {
          if (++calls === 1) throw new Error('database away');
          return false;
        },
        scheduler: clock.scheduler,
      },
      errors,
    );
    failing.start();
    clock.tick();
    await failing.idle();
    assert.deepEqual(
      errors.map((e) => (e as Error).message),
      ['database away'],
    );
    clock.tick();
    await failing.idle();
    assert.equal(calls, 2);
    await failing.stop();
  });
});
