import { loadEngineConfig } from '../config/load.js';
import { openBodyCodec } from '../crypto/setup.js';
import { openDatabase } from '../db/open.js';
import { ensureWritableHome, homeParts } from '../home.js';
import { createEmbedder } from '../embeddings/index.js';
import { reembed, type ReembedOutcome } from '../memory/reembed.js';
import { MemoryStore } from '../memory/store.js';
import { UsageError, type CliIo } from './io.js';

/**
 * `mnemos reembed [--batch-size n]`: re-embeds every memory with the model the MNEMOS_API_EMBEDDINGS_* settings name
 * and records it as the database's model (see memory/reembed.ts). Engines on the old model keep serving from the old
 * vectors meanwhile (external database; the embedded one is opened by one process, so stop its engine first); start
 * them again with the new settings once it is done.
 */
export async function reembedCommand(args: readonly string[], io: CliIo): Promise<number> {
  const batchSize = parseBatchSize(args);
  const config = loadEngineConfig(io.env);
  const log = (message: string) => io.stderr(`[mnemos] ${message}\n`);
  ensureWritableHome(config.home, homeParts(config));
  const { db } = await openDatabase(config);
  try {
    const codec = await openBodyCodec(db, config.encryptionMasterKey, (f) =>
      log(`memory ${f.memoryId} (bank ${JSON.stringify(f.bankId)}, tenant ${f.tenant}) failed to decrypt: ${f.reason}`),
    );
    const embedder = await createEmbedder(config.embeddings, config.home, log);
    let outcome: ReembedOutcome;
    try {
      outcome = await reembed(new MemoryStore(db, codec), embedder, { batchSize, log });
    } finally {
      await embedder.close().catch(() => undefined);
    }
    const target = `${outcome.to.model} (${outcome.to.dimension} dimensions)`;
    if (outcome.alreadyCurrent) {
      io.stdout(`[mnemos] the database already uses ${target}; nothing to re-embed.\n`);
      return 0;
    }
    const unreadable =
      outcome.unreadable > 0 ? ` ${outcome.unreadable} memories failed to decrypt and have no vector.` : '';
    io.stdout(
      `[mnemos] re-embedded ${outcome.reembedded} memories from ${outcome.from?.model} to ${target}.${unreadable} ` +
        'Start the engine with these embedding settings.\n',
    );
    return 0;
  } finally {
    await db.close();
  }
}

function parseBatchSize(args: readonly string[]): number {
  if (args.length === 0) return 64;
  const value =
    args[0] === '--batch-size' ? args[1] : args[0]?.startsWith('--batch-size=') ? args[0].slice(13) : undefined;
  const n = Number(value);
  if (args.length > (args[0] === '--batch-size' ? 2 : 1) || !Number.isInteger(n) || n < 1 || n > 4096) {
    throw new UsageError('reembed takes one option, --batch-size <1..4096>');
  }
  return n;
}
