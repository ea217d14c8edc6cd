import type { Engine } from '../../engine.js';
import { livenessBody } from '../../startup/health-bodies.js';
import { ENGINE_VERSION } from '../../version.js';
import type { TypedApp } from '../typed-app.js';

export function registerHealthRoutes(app: TypedApp, engine: Engine): void {
  app.get(
    '/health',
    { schema: { tags: ['health'], summary: 'Readiness: database and model loaded' } },
    async (_req, reply) => {
      try {
        const ms = await engine.pingDatabase();
        return {
          status: 'healthy',
          database: 'connected',
          db_acquire_ms: Math.round(ms * 1000) / 1000,
          embedding_model: engine.embedder.id,
          pool: engine.poolStats(),
        };
      } catch (error) {
        return reply
          .code(503)
          .header('retry-after', '5')
          .send({
            status: 'unhealthy',
            database: 'error',
            reason: `database unreachable: ${(error as Error).message}`,
          });
      }
    },
  );

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
      mcp: app.hasRoute({ method: 'POST', url: '/mcp' }),
      multi_tenant: engine.config.authToken !== undefined,
      embedding_model: engine.embedder.id,
      embedding_dimension: engine.embedder.dimension,
      database: engine.databaseKind,
    },
  }));

  app.get('/metrics', { schema: { tags: ['health'], summary: 'Prometheus metrics' } }, async (_req, reply) => {
    const stats = engine.poolStats();
    engine.metrics.dbPool.set({ state: 'total' }, stats.total);
    engine.metrics.dbPool.set({ state: 'idle' }, stats.idle);
    engine.metrics.dbPool.set({ state: 'waiting' }, stats.waiting);
    engine.metrics.queueDepth.set({ queue: 'embedding' }, engine.embedder.queueDepth);
    for (const [form, { bytes, memories }] of Object.entries(engine.cacheUsage())) {
      engine.metrics.recallCache.set({ form, measure: 'bytes' }, bytes);
      engine.metrics.recallCache.set({ form, measure: 'memories' }, memories);
    }
    return reply.type(engine.metrics.registry.contentType).send(await engine.metrics.registry.metrics());
  });
}
