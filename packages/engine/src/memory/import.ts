import { randomUUID } from 'node:crypto';
import { touchBank } from './bank-store.js';
import { MAX_CHUNK_CHARS, MAX_CHUNK_TOKENS } from './chunk.js';
import { embeddingText } from './embedding-text.js';
import type { RetainDependencies } from './retain.js';
import type { RestoredColumns } from './store.js';
import { banksOfIds } from './transfer-store.js';
import type { BatchPlace, NewMemory } from './types.js';
import { sha256Hex } from '../util/hash.js';
import { countTokens } from '../util/tokens.js';

/** One memory as an import brings it: its id, space and columns as its export had them. */
export interface ImportRecord
  extends RestoredColumns, Omit<NewMemory, 'batchId' | 'seq' | 'contentHash' | 'tokenCount'> {
  space: string;
  /** Its place in the call that stored it on the engine it comes from; without one, its place in this import. */
  place: BatchPlace | null;
}

/** What became of one record: stored, skipped as already there (its id in the bank, or its content in its space), or why not. */
export type ImportOutcome = 'imported' | 'skipped' | { problem: string };

type Placed = { record: ImportRecord; index: number };

/**
 * Stores a batch of records in one transaction, keeping their ids and dates, embedded with the engine's model and
 * sealed under the bank's key by the store (as a retain's memories are). A record whose id the bank already holds, or
 * whose content its space already holds, is skipped; one that cannot be stored says why, and the rest go on. A fact
 * needs its source in the bank already or earlier in the batch.
 */
export async function importRecords(
  deps: RetainDependencies,
  tenant: string,
  bankId: string,
  records: readonly ImportRecord[],
): Promise<ImportOutcome[]> {
  const outcomes: ImportOutcome[] = records.map(() => 'skipped');
  const held = await banksOfIds(deps.db, tenant, records.map((r) => r.id).concat(sourcesOf(records)));
  const seen = new Set<string>();
  const fresh: Placed[] = [];
  records.forEach((record, index) => {
    const problem = refusal(record, held, bankId);
    if (problem !== undefined) outcomes[index] = { problem };
    else if (!held.has(record.id) && !seen.has(record.id)) fresh.push({ record, index });
    seen.add(record.id);
  });
  const vectors = await deps.embedder.embed(
    fresh.map(({ record }) => embeddingText(record)),
    'document',
  );
  const batchId = randomUUID();
  const vectorOf = new Map(fresh.map(({ index }, i) => [index, vectors[i]!]));
  // The ids the bank holds: a fact may name any of them as its source.
  const stored = new Set([...held].filter(([, bank]) => bank === bankId).map(([id]) => id));
  await deps.db.transaction(async (tx) => {
    await touchBank(tx, tenant, bankId);
    // Retained memories first: the facts of this batch may name them as their source.
    for (const facts of [false, true]) {
      const group = fresh.filter(({ record }) => (record.sourceId !== null) === facts);
      const ready = group.filter(({ record, index }) => {
        if (record.sourceId === null || stored.has(record.sourceId)) return true;
        outcomes[index] = { problem: `its source memory ${record.sourceId} is not in the bank: import it first` };
        return false;
      });
      for (const space of new Set(ready.map(({ record }) => record.space))) {
        const inSpace = ready.filter(({ record }) => record.space === space);
        const rows = inSpace.map(({ record, index }) => ({
          ...newMemory(record, batchId, index),
          embedding: vectorOf.get(index)!,
        }));
        const ids = await deps.store.insert(tx, { tenant, bankId, space }, rows);
        inSpace.forEach(({ record, index }, i) => {
          // The store answers the id already holding the same content when there is one: a duplicate, skipped.
          if (ids[i] !== record.id) return;
          outcomes[index] = 'imported';
          stored.add(record.id);
        });
      }
    }
  });
  return outcomes;
}

const sourcesOf = (records: readonly ImportRecord[]): string[] =>
  records.flatMap((r) => (r.sourceId === null ? [] : [r.sourceId]));

/** Why a record cannot be stored, before any work: its id taken in another bank, or text longer than one memory. */
function refusal(record: ImportRecord, held: Map<string, string>, bankId: string): string | undefined {
  const owner = held.get(record.id);
  if (owner !== undefined && owner !== bankId) {
    return `id ${record.id} is taken by a memory of another bank; leave the id out to import it under a new one`;
  }
  if (record.text.length > MAX_CHUNK_CHARS || countTokens(record.text) > MAX_CHUNK_TOKENS) {
    return `text is longer than one memory (${MAX_CHUNK_CHARS} characters, ${MAX_CHUNK_TOKENS} tokens); retain it instead`;
  }
  return undefined;
}

function newMemory({ place, ...record }: ImportRecord, batchId: string, seq: number): NewMemory & RestoredColumns {
  return {
    ...record,
    ...(place ?? { batchId, seq }),
    contentHash: sha256Hex(record.text),
    tokenCount: countTokens(record.text),
  };
}
