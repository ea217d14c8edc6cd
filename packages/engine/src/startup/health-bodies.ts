import { PROBLEM_TYPE_BASE } from '@mnemos/problems';
import { ENGINE_VERSION } from '../version.js';
import type { ReadinessSnapshot } from './readiness.js';

/** `/health/live`: answered without the database, so a busy or warming engine is not mistaken for a dead one. */
export function livenessBody(startedAt: number): { status: string; version: string; uptime_seconds: number } {
  return {
    status: 'alive',
    version: ENGINE_VERSION,
    uptime_seconds: Math.round((Date.now() - startedAt) / 100) / 10,
  };
}

/**
 * `/health` while the engine starts: an RFC 9457 problem document (its `status` is the HTTP status, as that RFC
 * requires), with `code: "warming"`; `stage` and `progress` (0..1) say how far it is.
 */
export function warmingBody(snapshot: ReadinessSnapshot): object {
  return {
    type: `${PROBLEM_TYPE_BASE}warming`,
    title: 'Service Unavailable',
    status: 503,
    code: 'warming',
    detail: `The engine is starting (${snapshot.stage}); /health answers 200 once it is ready.`,
    stage: snapshot.stage,
    ...(snapshot.progress === undefined ? {} : { progress: snapshot.progress }),
  };
}
