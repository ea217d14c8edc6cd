import type { Engine } from '../../engine.js';
import { ENGINE_VERSION, type TypedApp } from '../app.js';

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

  app.get('/health/live', { schema: { tags: ['health'], summary: 'Liveness (no database access)' } }, async () => ({
    status: 'alive',
    version: ENGINE_VERSION,
    uptime_seconds: Math.round((Date.now() - engine.startedAt) / 100) / 10,
  }));

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
