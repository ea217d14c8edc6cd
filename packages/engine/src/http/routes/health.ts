import type { Engine } from '../../engine.js';
import { livenessBody } from '../../startup/health-bodies.js';
import { ENGINE_VERSION } from '../../version.js';
import {
  LivenessAnswer,
  metricsSuccess,
  ReadinessAnswer,
  unreadyAnswer,
  VersionAnswer,
} from '../../wire/answer-schemas.js';
import { plainJsonAnswers } from '../responses.js';
import type { TypedApp } from '../typed-app.js';
import { errorMessage } from '../../util/error-message.js';

/** These routes answer without a token even when the engine has one. */
const PUBLIC = { tags: ['health'], security: [] };

export function registerHealthRoutes(app: TypedApp, engine: Engine): void {
  app.get(
    '/health',
    {
      schema: {
        ...PUBLIC,
        operationId: 'getHealth',
        summary: 'Readiness: database and model loaded',
        response: { 200: ReadinessAnswer, 503: unreadyAnswer },
      },
      ...plainJsonAnswers,
    },
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
            reason: `database unreachable: ${errorMessage(error)}`,
          });
      }
    },
  );

  app.get(
    '/health/live',
    {
      schema: {
        ...PUBLIC,
        operationId: 'getLiveness',
        summary: 'Liveness (no database access)',
        response: { 200: LivenessAnswer },
      },
      ...plainJsonAnswers,
    },
    async () => livenessBody(engine.startedAt),
  );

  const versionSchema = {
    ...PUBLIC,
    operationId: 'getVersion',
    summary: 'Version and enabled features',
    response: { 200: VersionAnswer },
  };
  app.get('/version', { schema: versionSchema, ...plainJsonAnswers }, async () => ({
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

  const metricsSchema = {
    ...PUBLIC,
    operationId: 'getMetrics',
    summary: 'Prometheus metrics',
    response: metricsSuccess,
  };
  app.get('/metrics', { schema: metricsSchema }, async (_req, reply) => {
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
