import type { EngineConfig } from './config/load.js';
import { ping, type Database } from './db/database.js';
import { ensureEmbeddingSchema } from './db/embedding-schema.js';
import { openDatabase } from './db/open.js';
import { BankIndexes } from './db/recall-index.js';
import type { BodyCodec } from './crypto/codec.js';
import { EngineRegistration } from './crypto/connected-engines.js';
import { openBodyCodec } from './crypto/setup.js';
import { BATCH_TOKENS, createEmbedder, MicroBatcher, paddedTokens, type Embedder } from './embeddings/index.js';
import { createJobQueue } from './jobs/index.js';
import { ExpiryJob } from './jobs/expiry.js';
import { systemClock, type Clock } from './util/clock.js';
import type { JobQueue } from './jobs/queue.js';
import { openLlm, type OpenedLlm } from './llm/index.js';
import type { Logger } from './log.js';
import type { AfterRetainHook } from './memory/retain.js';
import { MemoryStore } from './memory/store.js';
import { EngineMetrics } from './metrics.js';
import { ENGINE_PLUGINS, type EnginePlugin, type InstalledPlugin, type PluginParts } from './plugins/index.js';
import { MemoryService } from './service/memory-service.js';
import type { ProgressReporter } from './startup/readiness.js';
import type { CompactTier, PostgresTier } from './recall/tier.js';
import { PostgresBankIndex } from './vectors/storage/postgres-index.js';
import { StatisticsFolder } from './vectors/storage/statistics-folder.js';
import { TombstonePruner } from './vectors/storage/tombstone-pruner.js';
import { VectorCache } from './vectors/vector-cache.js';
import { errorMessage } from './util/error-message.js';

export type { Logger } from './log.js';

/** What a host (or a test) may set on an engine besides its configuration. */
export interface EngineOptions {
  /** What "now" is for expiry and retention; the system clock by default. */
  clock?: Clock | undefined;
  /** How often the expiry job runs, in milliseconds (jobs/expiry.ts). */
  expiryEveryMs?: number | undefined;
  /**
   * A model already loaded, used instead of loading the configured one (tests share one among the engines of a
   * process); the engine checks it against its database as any model, and closes it when it closes.
   */
  model?: Embedder | undefined;
}

/** The parts the engine opens before its plugins install, in the order they open. */
interface OpenedParts {
  db: Database;
  /** This engine's entry among the engines connected to an external database (none on the embedded one). */
  registration: EngineRegistration | undefined;
  codec: BodyCodec;
  store: MemoryStore;
  vectors: VectorCache;
  postgres: PostgresTier | undefined;
  compact: CompactTier;
  embedder: MicroBatcher;
  metrics: EngineMetrics;
  queue: JobQueue;
  llm: OpenedLlm | undefined;
}

/** The Postgres tier's per-bank vector indexes; a failed build is logged (recalls of the bank scan exactly meanwhile). */
function bankIndexes(db: Database, log: Logger): BankIndexes {
  const bank = (tenant: string, bankId: string) => `bank ${JSON.stringify(bankId)} (tenant ${tenant})`;
  return new BankIndexes(db, {
    building: (tenant, bankId) => {
      if (db.kind === 'external') log.info(`building the vector index of ${bank(tenant, bankId)} concurrently`);
      else
        log.warn(
          `building the vector index of ${bank(tenant, bankId)} for the Postgres tier: the embedded database ` +
            'answers nothing else until it ends (minutes for a large bank); to avoid it, raise ' +
            'MNEMOS_API_RECALL_CACHE_MIB until the bank fits in memory and leave ' +
            'MNEMOS_API_RECALL_POSTGRES_TIER_MIN_MEMORIES unset, or use an external database',
        );
    },
    failed: (tenant, bankId, error) =>
      log.warn(
        `building the vector index of ${bank(tenant, bankId)} failed (${error.message}); ` +
          'its recalls scan every vector until a later recall builds it',
      ),
  });
}

/** Runs each hook in order, in the retain's transaction. */
function chainAfterRetain(hooks: ReadonlyArray<AfterRetainHook | undefined>): AfterRetainHook {
  const present = hooks.filter((hook): hook is AfterRetainHook => hook !== undefined);
  return async (tx, partition, ids, run) => {
    for (const hook of present) await hook(tx, partition, ids, run);
  };
}

/**
 * The composition root: opens the database (with its body codec and bank vector index), the embedding model, the job
 * queue and the LLM, installs the optional features as plugins in their declared order, and builds the memory
 * service on them. The HTTP API, the MCP server and the CLI use the service; nothing else reaches into the parts.
 */
export class Engine {
  readonly startedAt = Date.now();
  readonly db: Database;
  private readonly registration: EngineRegistration | undefined;
  /** Encryption at rest: the no-op, or envelope encryption under MNEMOS_API_ENCRYPTION_MASTER_KEY. */
  readonly codec: BodyCodec;
  /** The memories table, read and written through the codec. */
  readonly store: MemoryStore;
  readonly embedder: MicroBatcher;
  readonly metrics: EngineMetrics;
  readonly service: MemoryService;
  private readonly queue: JobQueue;
  private readonly llm: OpenedLlm | undefined;
  private readonly vectors: VectorCache;
  private readonly plugins: ReadonlyArray<InstalledPlugin & { name: string }>;
  private preloading: Promise<void> = Promise.resolve();
  /** Removes old tombstones in the background (an engine further behind lists a bank's ids instead). */
  private readonly pruner: TombstonePruner;
  /** Folds the keyword statistics the writes append into the totals recall reads with them. */
  private readonly folder: StatisticsFolder;
  /** Deletes expired memories in the background (reads leave them out from the instant they expire). */
  readonly expiry: ExpiryJob;

  private constructor(
    readonly config: EngineConfig,
    readonly log: Logger,
    parts: OpenedParts,
    plugins: readonly EnginePlugin[],
    options: EngineOptions,
  ) {
    this.db = parts.db;
    this.registration = parts.registration;
    this.codec = parts.codec;
    this.store = parts.store;
    this.embedder = parts.embedder;
    this.metrics = parts.metrics;
    this.queue = parts.queue;
    this.llm = parts.llm;
    this.vectors = parts.vectors;
    this.pruner = new TombstonePruner(this.db, (error) =>
      log.warn(`pruning tombstones failed (${errorMessage(error)}); it is tried again in a minute`),
    );
    this.folder = new StatisticsFolder(this.db, (error) =>
      log.warn(`folding keyword statistics failed (${errorMessage(error)}); it is tried again shortly`),
    );
    const clock = options.clock ?? systemClock;
    this.expiry = new ExpiryJob(
      this.db,
      clock,
      (error) => log.warn(`deleting expired memories failed (${errorMessage(error)}); it is tried again shortly`),
      options.expiryEveryMs,
    );
    const pluginParts: PluginParts = {
      config,
      db: this.db,
      codec: this.codec,
      store: this.store,
      embedder: this.embedder,
      log,
      metrics: this.metrics,
      queue: this.queue,
      llm: this.llm?.client,
      // Bound lazily: the chain is complete once every plugin has installed, before any retain runs.
      afterRetain: (tx, partition, ids, run) => afterRetain(tx, partition, ids, run),
      recall: (query) => this.service.recall(query),
    };
    this.plugins = plugins.flatMap((plugin) => {
      const installed = plugin.install(pluginParts);
      return installed ? [{ name: plugin.name, ...installed }] : [];
    });
    const hooks = this.plugins.map((p) => p.hooks);
    const afterRetain = chainAfterRetain(hooks.map((h) => h.afterRetain));
    this.service = new MemoryService(
      {
        db: this.db,
        store: this.store,
        index: this.vectors,
        postgres: parts.postgres,
        compact: parts.compact,
        codec: this.codec,
        embedder: this.embedder,
        metrics: this.metrics,
        afterRetain,
        clock,
      },
      {
        retainLater: hooks.find((h) => h.retainLater)?.retainLater,
        reflect: hooks.find((h) => h.reflect)?.reflect,
        operationStatus: hooks.find((h) => h.operationStatus)?.operationStatus,
      },
    );
  }

  /** Names of the installed plugins, in install order. */
  get features(): string[] {
    return this.plugins.map((p) => p.name);
  }

  /**
   * `onProgress` hears each start stage ("opening database", "loading model") as it begins; the model loader may
   * report finer stages and progress through it.
   */
  static async open(
    config: EngineConfig,
    log: Logger,
    onProgress: ProgressReporter = () => undefined,
    plugins: readonly EnginePlugin[] = ENGINE_PLUGINS,
    options: EngineOptions = {},
  ): Promise<Engine> {
    onProgress('opening database');
    const opened = await openDatabase(config, (available, reason) =>
      available
        ? log.info(`database: ${reason}; requests are served again`)
        : log.warn(`database: out of reach (${reason}); requests answer 503 database_unavailable until it is back`),
    );
    const db: Database = opened.db;
    let registration: EngineRegistration | undefined;
    try {
      if (opened.applied.length > 0) log.info(`database migrations applied: ${opened.applied.join(', ')}`);
      // Other engines may share an external database: `mnemos rotate-key` must know which key each one serves with.
      if (db.kind === 'external') {
        registration = await EngineRegistration.register(db, config.encryptionMasterKey, {
          onError: (error) =>
            log.warn(
              `this engine's heartbeat could not be recorded (${errorMessage(error)}); it is tried again ` +
                'every few seconds, and `mnemos rotate-key` takes the engine for gone after a minute without one',
            ),
        });
      }
      const codec = await openBodyCodec(db, config.encryptionMasterKey, (f) =>
        log.error(
          `memory ${f.memoryId} (bank ${JSON.stringify(f.bankId)}, tenant ${f.tenant}) failed to decrypt: ` +
            `${f.reason}; it is left out of every answer`,
        ),
      );
      onProgress('loading model');
      const model =
        options.model ?? (await createEmbedder(config.embeddings, config.home, (m) => log.info(m), onProgress));
      // A refused model (another one built the database) must not leave its thread running.
      await ensureEmbeddingSchema(db, model.id, model.dimension).catch(async (error: unknown) => {
        await model.close().catch(() => undefined);
        throw error;
      });
      const tierMin = config.recall.postgresTierMinMemories;
      // Every reader and writer of memories gets the store, so bodies pass through the codec on their way.
      const store = new MemoryStore(db, codec);
      // Recall searches in-memory copies of each bank (vectors, terms, bodies), kept in step with the database, up to
      // the cache's bound; banks above the Postgres tier's threshold are searched in the database's indexes instead.
      const vectors = new VectorCache(store, model.dimension, config.recall.cacheBytes);
      const search = new PostgresBankIndex(db, store, bankIndexes(db, log));
      const postgres = tierMin === undefined ? undefined : { search, minMemories: tierMin };
      // Banks too large for a full copy are held compact: their arms in memory, their rows read from the database.
      const compact = { search, minMemories: config.recall.compactMinMemories };
      const metrics = new EngineMetrics();
      // Two batches in flight: the model's thread starts the next one without waiting for the main thread.
      const embedder = new MicroBatcher(
        model,
        BATCH_TOKENS,
        (size, seconds, tokens) => {
          metrics.embeddingBatch.observe(size);
          metrics.embeddingSeconds.observe(seconds);
          metrics.embeddingTokens.inc(tokens.reduce((sum, n) => sum + n, 0));
          metrics.embeddingPaddedTokens.inc(paddedTokens(tokens));
        },
        2,
      );
      log.info(`embedding model ${model.id} ready (${model.dimension} dimensions)`);
      const queue = createJobQueue({ config, db, log, metrics });
      const llm = openLlm(config, log, metrics);
      const engine = new Engine(
        config,
        log,
        { db, registration, codec, store, vectors, postgres, compact, embedder, metrics, queue, llm },
        plugins,
        options,
      );
      // A queue that fails to start must not leave the model's or the LLM's thread running.
      await queue.start().catch(async (error: unknown) => {
        await engine.close().catch(() => undefined);
        throw error;
      });
      engine.pruner.start();
      engine.folder.start();
      engine.expiry.start();
      return engine;
    } catch (error) {
      await registration?.close();
      await db.close().catch(() => undefined);
      throw error;
    }
  }

  /** How long a trivial query takes, in milliseconds; throws when the database is unreachable. */
  async pingDatabase(): Promise<number> {
    const started = performance.now();
    await ping(this.db);
    return performance.now() - started;
  }

  get databaseKind(): Database['kind'] {
    return this.db.kind;
  }

  poolStats(): ReturnType<Database['stats']> {
    return this.db.stats();
  }

  /** The recall cache's copies by form: bytes and memories. */
  cacheUsage(): ReturnType<VectorCache['usage']> {
    return this.vectors.usage();
  }

  /** Loads recently written banks' indexes in the background; `close` waits for it (between banks). */
  preloadIndexes(): void {
    const started = performance.now();
    this.preloading = this.vectors.preload(this.db, this.config.recall.postgresTierMinMemories).then(
      (n) => {
        const ms = Math.round(performance.now() - started);
        if (n > 0) this.log.info(`bank indexes of ${n} bank(s) loaded in ${ms} ms`);
      },
      (error: unknown) => {
        if (!this.vectors.stopped) {
          this.log.warn(`loading bank indexes failed (${errorMessage(error)}); they load on first recall instead`);
        }
      },
    );
  }

  /**
   * Stops in the reverse of opening: the index preload, the job queue (running jobs go back to the queue), the
   * plugins, the LLM transport, the model, its entry among the engines connected to the database, and last the
   * database (releasing its lock).
   */
  async close(): Promise<void> {
    this.vectors.stop();
    await this.preloading;
    await this.queue.stop().catch(() => undefined);
    await this.pruner.stop().catch(() => undefined);
    await this.folder.stop().catch(() => undefined);
    await this.expiry.stop().catch(() => undefined);
    for (const plugin of this.plugins) await plugin.close().catch(() => undefined);
    await this.llm?.close().catch(() => undefined);
    await this.embedder.close().catch(() => undefined);
    await this.registration?.close();
    await this.db.close();
  }
}
