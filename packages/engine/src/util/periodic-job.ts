/** Calls `tick` every `everyMs` until the answered function is called. */
export type Scheduler = (tick: () => void, everyMs: number) => () => void;

/** The timers' schedule; a periodic job never keeps the process alive. */
const intervalScheduler: Scheduler = (tick, everyMs) => {
  const timer = setInterval(tick, everyMs);
  timer.unref();
  return () => clearInterval(timer);
};

export interface PeriodicWork {
  /**
   * One bounded piece of the work, in its own transaction; answers whether the piece was full, so that more may be
   * waiting. Bounded pieces keep each transaction's work and locks small whatever piled up (a restart after a long stop).
   */
  step(): Promise<boolean>;
  everyMs: number;
  /** Full steps per run at most; a larger backlog goes on at the next run. */
  stepsPerRun: number;
  /** Whether a run starts at once too, rather than only after the first `everyMs`. */
  runAtStart: boolean;
  /** A run that fails is reported here and tried again at the next tick. */
  onError(error: unknown): void;
  scheduler?: Scheduler;
}

/**
 * Background upkeep: runs the work every `everyMs`, one run at a time (a tick that finds a run still going skips), each
 * run a bounded number of steps, and ends a run early once stopped.
 */
export class PeriodicJob {
  private cancel: (() => void) | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly work: PeriodicWork) {}

  start(): void {
    if (this.cancel !== undefined) return;
    this.cancel = (this.work.scheduler ?? intervalScheduler)(() => this.tick(), this.work.everyMs);
    if (this.work.runAtStart) this.tick();
  }

  /** Stops the schedule and waits for a run in progress. */
  async stop(): Promise<void> {
    this.cancel?.();
    this.cancel = undefined;
    await this.running;
  }

  /** Waits for the run in progress, if any (a test's way to know the job has looked). */
  async idle(): Promise<void> {
    await this.running;
  }

  private tick(): void {
    if (this.running) return;
    this.running = this.run()
      .catch((error: unknown) => this.work.onError(error))
      .finally(() => {
        this.running = undefined;
      });
  }

  private async run(): Promise<void> {
    for (let step = 0; step < this.work.stepsPerRun && this.cancel !== undefined; step++) {
      if (!(await this.work.step())) return;
    }
  }
}
