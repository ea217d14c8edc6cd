import type { EngineConfig } from './config/load.js';
import type { Database } from './db/database.js';
import { ensureEmbeddingSchema } from './db/embedding-schema.js';
import { openDatabase } from './db/open.js';
import { plaintextCodec, withCodec, type BodyCodec } from './crypto/codec.js';
import { openBodyCodec } from './crypto/setup.js';
import { BATCH_TOKENS, createEmbedder, MicroBatcher } from './embeddings/index.js';
import type { AfterRetainHook } from './memory/retain.js';
import { EngineMetrics } from './metrics.js';
import type { ProgressReporter } from './startup/readiness.js';
import { attachVectorCache } from './vectors/registry.js';
import type { ReflectBodyT } from './http/routes/reflect.js';

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/**
 * The engine's parts, opened in order at start (home, database + migrations, embedding model + schema check) and
 * shared by the HTTP layer, the MCP server and the CLI.
 */
export class Engine {
  readonly startedAt = Date.now();
  /** Extension points for features layered on retain (LLM fact extraction enqueues here, in the same transaction). */
  readonly afterRetainHooks: AfterRetainHook[] = [];
  readonly closers: Array<() => Promise<void>> = [];
  /** Features switched on by optional layers (shown by /version). */
  readonly features = { mcp: false };
  /** Set by the LLM layer; without it reflect answers 503 llm_not_configured. */
  reflector: ((tenant: string, bankId: string, body: ReflectBodyT) => Promise<object>) | undefined;
  /** Set by the job queue; answers an operation's status, or undefined when unknown. */
  operations: ((tenant: string, id: string) => Promise<object | undefined>) | undefined;

  /** Encryption at rest (crypto/codec.ts): the no-op, or envelope encryption under MNEMOS_API_ENCRYPTION_MASTER_KEY. */
  codec: BodyCodec = plaintextCodec;

  private constructor(
    readonly config: EngineConfig,
    readonly db: Database,
    readonly embedder: MicroBatcher,
    readonly log: Logger,
    readonly metrics: EngineMetrics,
  ) {}

  /**
   * `onProgress` hears each start stage ("opening database", "loading model") as it begins; the model loader may
   * report finer stages and progress through it.
   */
  static async open(
    config: EngineConfig,
    log: Logger,
    onProgress: ProgressReporter = () => undefined,
  ): Promise<Engine> {
    onProgress('opening database');
    const opened = await openDatabase(config, (available, reason) =>
      available
        ? log.info(`database: ${reason}; requests are served again`)
        : log.warn(`database: out of reach (${reason}); requests answer 503 database_unavailable until it is back`),
    );
    let db: Database = opened.db;
    const applied = opened.applied;
    try {
      if (applied.length > 0) log.info(`database migrations applied: ${applied.join(', ')}`);
      const codec = await openBodyCodec(db, config.encryptionMasterKey, (f) =>
        log.error(`memory ${f.memoryId} (bank ${JSON.stringify(f.bankId)}, tenant ${f.tenant}) failed to decrypt: ${f.reason}; it is left out of every answer`),
      );
      db = withCodec(db, codec);
      onProgress('loading model');
      const model = await createEmbedder(config.embeddings, config.home, (m) => log.info(m), onProgress);
      // A refused model (another one built the database) must not leave its thread running.
      await ensureEmbeddingSchema(db, model.id, model.dimension).catch(async (error: unknown) => {
        await model.close().catch(() => undefined);
        throw error;
      });
      // Semantic search scans in-memory copies of each bank's vectors, kept in step with the database.
      attachVectorCache(db, model.dimension);
      const metrics = new EngineMetrics();
      // Two batches in flight: the model's thread starts the next one without waiting for the main thread (batcher.ts).
      const batcher = new MicroBatcher(model, BATCH_TOKENS, (size, seconds) => {
        metrics.embeddingBatch.observe(size);
        metrics.embeddingSeconds.observe(seconds);
      }, 2);
      log.info(`embedding model ${model.id} ready (${model.dimension} dimensions)`);
      const engine = new Engine(config, db, batcher, log, metrics);
      engine.codec = codec;
      return engine;
    } catch (error) {
      await db.close().catch(() => undefined);
      throw error;
    }
  }

  /** The retain hook chain as one hook. */
  afterRetain: AfterRetainHook = async (tx, partition, ids) => {
    for (const hook of this.afterRetainHooks) await hook(tx, partition, ids);
  };

  async close(): Promise<void> {
    for (const close of this.closers.reverse()) await close().catch(() => undefined);
    await this.embedder.close().catch(() => undefined);
    await this.db.close();
  }
}
