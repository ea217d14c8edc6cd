import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics for /metrics (prom-client): latency per route, operation counts, batches, queue, pool. */
export class EngineMetrics {
  readonly registry = new Registry();
  readonly httpDuration = new Histogram({
    name: 'mnemos_http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.002, 0.005, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly operations = new Counter({
    name: 'mnemos_operations_total',
    help: 'Retain, recall and reflect calls',
    labelNames: ['operation'],
    registers: [this.registry],
  });
  readonly recallTiers = new Counter({
    name: 'mnemos_recall_tier_total',
    help: 'Recalls by the tier that searched: memory (the in-memory bank copy) or postgres (the database indexes)',
    labelNames: ['tier'],
    registers: [this.registry],
  });
  readonly memoriesRetained = new Counter({
    name: 'mnemos_memories_retained_total',
    help: 'Memories stored by retain',
    registers: [this.registry],
  });
  readonly embeddingBatch = new Histogram({
    name: 'mnemos_embedding_batch_size',
    help: 'Texts per embedding inference batch',
    buckets: [1, 2, 4, 8, 16, 32, 64],
    registers: [this.registry],
  });
  readonly embeddingSeconds = new Histogram({
    name: 'mnemos_embedding_batch_duration_seconds',
    help: 'Time from sending a batch to the model to its answer (with two batches in flight, the second one also waits for the first)',
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [this.registry],
  });
  readonly embeddingTokens = new Counter({
    name: 'mnemos_embedding_tokens_total',
    help: 'Tokens of the texts sent to the embedding model (estimated; the model adds its two marker tokens)',
    registers: [this.registry],
  });
  readonly embeddingPaddedTokens = new Counter({
    name: 'mnemos_embedding_padded_tokens_total',
    help: 'Tokens the embedding model ran: per batch, its size times its longest text (the rest is padding)',
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'mnemos_queue_depth',
    help: 'Pending work: embedding texts waiting and background jobs queued',
    labelNames: ['queue'],
    registers: [this.registry],
  });
  readonly recallCache = new Gauge({
    name: 'mnemos_recall_cache',
    help: "The banks' copies in memory by form (full or compact): their bytes (the cache's estimate) and memories",
    labelNames: ['form', 'measure'],
    registers: [this.registry],
  });
  readonly dbPool = new Gauge({
    name: 'mnemos_db_pool_connections',
    help: 'Database pool connections by state',
    labelNames: ['state'],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'mnemos_' });
  }
}
