import type { EngineConfig } from './config/load.js';
import type { Database } from './db/database.js';
import { ensureEmbeddingSchema } from './db/embedding-schema.js';
import { openDatabase } from './db/open.js';
import type { BodyCodec } from './crypto/codec.js';
import { openBodyCodec } from './crypto/setup.js';
import { createEmbedder, MicroBatcher } from './embeddings/index.js';
import type { AfterRetainHook, RetainDependencies } from './memory/retain.js';
import { MemoryStore } from './memory/store.js';
import type { RecallDependencies } from './recall/pipeline.js';
import { EngineMetrics } from './metrics.js';
import type { ProgressReporter } from './startup/readiness.js';
import { VectorCache } from './vectors/vector-cache.js';
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

  /** The memories table, through the body codec. */
  readonly store: MemoryStore;
  /** The in-memory bank indexes recall searches, kept in step with the database. */
  readonly index: VectorCache;
  readonly retainDependencies: RetainDependencies;
  readonly recallDependencies: RecallDependencies;

  private constructor(
    readonly config: EngineConfig,
    readonly db: Database,
    readonly embedder: MicroBatcher,
    readonly log: Logger,
    readonly metrics: EngineMetrics,
    /** Encryption at rest (crypto/codec.ts): the no-op, or envelope encryption under the master key setting. */
    readonly codec: BodyCodec,
    dimension: number,
  ) {
    this.store = new MemoryStore(db, codec);
    this.index = new VectorCache(this.store, dimension);
    this.retainDependencies = { db, store: this.store, embedder };
    this.recallDependencies = { db, index: this.index, codec, embedder };
  }

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
    const opened = await openDatabase(config);
    const db: Database = opened.db;
    const applied = opened.applied;
    try {
      if (applied.length > 0) log.info(`database migrations applied: ${applied.join(', ')}`);
      const codec = await openBodyCodec(db, config.encryptionMasterKey, (f) =>
        log.error(`memory ${f.memoryId} (bank ${JSON.stringify(f.bankId)}, tenant ${f.tenant}) failed to decrypt: ${f.reason}; it is left out of every answer`),
      );
      onProgress('loading model');
      const model = await createEmbedder(config.embeddings, config.home, (m) => log.info(m), onProgress);
      // A refused model (another one built the database) must not leave its thread running.
      await ensureEmbeddingSchema(db, model.id, model.dimension).catch(async (error: unknown) => {
        await model.close().catch(() => undefined);
        throw error;
      });
      const metrics = new EngineMetrics();
      // Two batches in flight: the model's thread starts the next one without waiting for the main thread (batcher.ts).
      const batcher = new MicroBatcher(model, 32, (size, seconds) => {
        metrics.embeddingBatch.observe(size);
        metrics.embeddingSeconds.observe(seconds);
      }, 2);
      log.info(`embedding model ${model.id} ready (${model.dimension} dimensions)`);
      return new Engine(config, db, batcher, log, metrics, codec, model.dimension);
    } catch (error) {
      await db.close().catch(() => undefined);
      throw error;
    }
  }

  /** The retain hook chain as one hook. */
  afterRetain: AfterRetainHook = async (tx, partition, ids, run) => {
    for (const hook of this.afterRetainHooks) await hook(tx, partition, ids, run);
  };

  async close(): Promise<void> {
    for (const close of this.closers.reverse()) await close().catch(() => undefined);
    await this.embedder.close().catch(() => undefined);
    await this.db.close();
  }
}
