import type { Logger } from '../log.js';

/**
 * What a slow start-up step reports: the stage it is in ("loading model", "downloading model") and, when it knows,
 * how far along it is (0..1). The model loader receives one of these; /health shows the latest report.
 */
export type ProgressReporter = (stage: string, progress?: number) => void;

export interface ReadinessSnapshot {
  ready: boolean;
  stage: string;
  progress: number | undefined;
}

/**
 * The engine's start-up state, readable by the HTTP server while the engine warms. Each stage's end is logged once
 * at info with its duration, so a slow start shows which step took the time.
 */
export class Readiness {
  private stage = 'starting';
  private progress: number | undefined;
  private stageStarted = performance.now();
  private readonly started = performance.now();
  private ready = false;

  constructor(private readonly log: Pick<Logger, 'info'>) {}

  /** Enters `stage` (ending the previous one) or, for the same stage, updates its progress. */
  readonly report: ProgressReporter = (stage, progress) => {
    if (stage !== this.stage) {
      this.endStage();
      this.stage = stage;
      this.stageStarted = performance.now();
    }
    const known = progress !== undefined && Number.isFinite(progress);
    this.progress = known ? Math.min(1, Math.max(0, progress)) : undefined;
  };

  markReady(): void {
    this.endStage();
    this.ready = true;
    this.stage = 'ready';
    this.progress = undefined;
    this.log.info(`engine ready in ${elapsed(this.started)} ms`);
  }

  snapshot(): ReadinessSnapshot {
    return { ready: this.ready, stage: this.stage, progress: this.progress };
  }

  private endStage(): void {
    if (this.stage === 'starting') return;
    this.log.info(`start stage "${this.stage}" done in ${elapsed(this.stageStarted)} ms`);
  }
}

function elapsed(since: number): number {
  return Math.round(performance.now() - since);
}
