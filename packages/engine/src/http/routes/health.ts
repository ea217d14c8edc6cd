import type { Engine } from '../../engine.js';
import type { ReadinessSnapshot } from '../../startup/readiness.js';
import { ENGINE_VERSION, type TypedApp } from '../app.js';

/** `/health/live`: answered without the database, so a busy or warming engine is not mistaken for a dead one. */
export function livenessBody(startedAt: number): object {
  return {
    status: 'alive',
    version: ENGINE_VERSION,
    uptime_seconds: Math.round((Date.now() - startedAt) / 100) / 10,
  };
}

/**
 * `/health` while the engine starts: a problem document whose `status` is the health state ("warming"), as in the
 * healthy answer ("healthy"), so a probe reads one field in both; `stage` and `progress` (0..1) say how far it is.
 */
export function warmingBody(snapshot: ReadinessSnapshot): object {
  return {
    type: 'https://mnemos.dev/problems/warming',
    title: 'Service Unavailable',
    status: 'warming',
    code: 'warming',
    detail: `The engine is starting (${snapshot.stage}); /health answers 200 once it is ready.`,
    stage: snapshot.stage,
    ...(snapshot.progress === undefined ? {} : { progress: snapshot.progress }),
  };
}

export function registerHealthRoutes(app: TypedApp, engine: Engine): void {
  app.get('/health', { schema: { tags: ['health'], summary: 'Readiness: database and model loaded' } }, async (_req, reply) => {
    try {
      const started = performance.now();
      await engine.db.query('SELECT 1');
      return {
        status: 'healthy',
        database: 'connected',
        db_acquire_ms: Math.round((performance.now() - started) * 1000) / 1000,
        embedding_model: engine.embedder.id,
        pool: engine.db.stats(),
      };
    } catch (error) {
      return reply.code(503).header('retry-after', '5').send({
        status: 'unhealthy',
        database: 'error',
        reason: `database unreachable: ${(error as Error).message}`,
      });
    }
  });

  app.get('/health/live', { schema: { tags: ['health'], summary: 'Liveness (no database access)' } }, async () =>
    livenessBody(engine.startedAt),
  );

  app.get('/version', { schema: { tags: ['health'], summary: 'Version and enabled features' } }, async () => ({
    api_version: ENGINE_VERSION,
    version: ENGINE_VERSION,
    features: {
      llm: engine.config.llm !== undefined,
      llm_provider: engine.config.llm?.provider ?? null,
      encryption: engine.config.encryptionMasterKey !== undefined,
      mcp: engine.features.mcp,
      multi_tenant: engine.config.authToken !== undefined,
      embedding_model: engine.embedder.id,
      embedding_dimension: engine.embedder.dimension,
      database: engine.db.kind,
    },
  }));

  app.get('/metrics', { schema: { tags: ['health'], summary: 'Prometheus metrics' } }, async (_req, reply) => {
    const stats = engine.db.stats();
    engine.metrics.dbPool.set({ state: 'total' }, stats.total);
    engine.metrics.dbPool.set({ state: 'idle' }, stats.idle);
    engine.metrics.dbPool.set({ state: 'waiting' }, stats.waiting);
    engine.metrics.queueDepth.set({ queue: 'embedding' }, engine.embedder.queueDepth);
    return reply.type(engine.metrics.registry.contentType).send(await engine.metrics.registry.metrics());
  });
}
