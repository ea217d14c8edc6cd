import type { EngineConfig } from '../config/load.js';
import type { BodyCodec } from '../crypto/codec.js';
import type { Database } from '../db/database.js';
import type { Embedder } from '../embeddings/embedder.js';
import type { JobQueue } from '../jobs/queue.js';
import type { LlmClient } from '../llm/client.js';
import type { Logger } from '../log.js';
import type { AfterRetainHook } from '../memory/retain.js';
import type { MemoryStore } from '../memory/store.js';
import type { EngineMetrics } from '../metrics.js';
import type { ServiceFeatures } from '../service/memory-service.js';
import type { RecallQuery, RecallResult } from '../service/types.js';

/** The engine's parts a plugin may use; the engine opens them all before any plugin installs. */
export interface PluginParts {
  config: EngineConfig;
  db: Database;
  /** Encryption at rest (or the plaintext no-op), for content a plugin keeps outside the memories table. */
  codec: BodyCodec;
  /** The memories table, read and written through the codec. */
  store: MemoryStore;
  embedder: Embedder;
  log: Logger;
  metrics: EngineMetrics;
  queue: JobQueue;
  /** The LLM, when one is configured. */
  llm: LlmClient | undefined;
  /** The whole retain hook chain (every plugin's hook, in plugin order). */
  afterRetain: AfterRetainHook;
  recall(query: RecallQuery): Promise<RecallResult>;
}

/** What an installed plugin adds: a retain hook and features of the memory service. */
export interface PluginHooks extends ServiceFeatures {
  afterRetain?: AfterRetainHook | undefined;
}

export interface InstalledPlugin {
  hooks: PluginHooks;
  close(): Promise<void>;
}

/** An optional feature of the engine. Plugins install in the order the engine declares them. */
export interface EnginePlugin {
  name: string;
  install(engine: PluginParts): InstalledPlugin | undefined;
}

export const NOTHING_TO_CLOSE = async (): Promise<void> => undefined;
