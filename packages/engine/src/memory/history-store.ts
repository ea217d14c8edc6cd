import type { Queryable } from '../db/database.js';
import type { BodyCodec, EncodedRow } from '../crypto/codec.js';
import type { Metadata } from './types.js';

/** What changed a memory into one of its versions (migration 010 names them). */
export type MemoryChange = 'create' | 'update' | 'invalidate' | 'restore' | 'supersede' | 'expire' | 'delete';

/** One version of a memory, as its history keeps it; a deleted memory's versions keep no text or metadata. */
export interface StoredVersion {
  memoryId: string;
  version: number;
  change: MemoryChange;
  text: string | null;
  metadata: Metadata | null;
  state: 'valid' | 'invalidated';
  validFrom: Date;
  validTo: Date | null;
  supersededBy: string | null;
  changedAt: Date;
  operationId: string | null;
}

interface VersionRow extends EncodedRow {
  version: number;
  change: string;
  state: string;
  valid_from: Date | string;
  valid_to: Date | string | null;
  superseded_by: string | null;
  changed_at: Date | string;
  operation_id: string | null;
}

const date = (value: Date | string): Date => (value instanceof Date ? value : new Date(value));

/**
 * A memory's versions, oldest first, their bodies opened through the body codec (the history keeps them as the memory
 * stores its body: ciphertext under encryption at rest). A version whose ciphertext fails to open was reported by the
 * codec and is left out, as a memory would be.
 */
export function readHistory(
  q: Queryable,
  codec: BodyCodec,
  tenant: string,
  bankId: string,
  memoryId: string,
): Promise<StoredVersion[]> {
  return readHistories(q, codec, tenant, bankId, [memoryId]);
}

/** The versions of several memories of a bank, by memory then oldest first (see readHistory). */
export async function readHistories(
  q: Queryable,
  codec: BodyCodec,
  tenant: string,
  bankId: string,
  memoryIds: readonly string[],
): Promise<StoredVersion[]> {
  const rows = await q.query<VersionRow>(
    `SELECT memory_id::text AS id, bank_id, version, change, text, context, metadata, entities, body_enc, state,
       valid_from, valid_to, superseded_by::text AS superseded_by, changed_at, operation_id
     FROM memory_history WHERE tenant = $1 AND bank_id = $2 AND memory_id = ANY($3::uuid[]) ORDER BY memory_id, version`,
    [tenant, bankId, [...memoryIds]],
  );
  const withBody = rows.filter(hasBody);
  const bodies = await codec.openRows(q, tenant, withBody);
  const opened = new Map(withBody.map((row, i) => [row, bodies[i]]));
  const versions: StoredVersion[] = [];
  for (const row of rows) {
    const body = opened.get(row);
    if (hasBody(row) && body === undefined) continue;
    versions.push({
      memoryId: row.id,
      version: row.version,
      change: row.change as MemoryChange,
      text: body?.text ?? null,
      metadata: body?.metadata ?? null,
      state: row.state === 'invalidated' ? 'invalidated' : 'valid',
      validFrom: date(row.valid_from),
      validTo: row.valid_to === null ? null : date(row.valid_to),
      supersededBy: row.superseded_by,
      changedAt: date(row.changed_at),
      operationId: row.operation_id,
    });
  }
  return versions;
}

/** A version with a body: every version but a deleted memory's (whose bodies are wiped). */
const hasBody = (row: VersionRow): boolean => row.text !== null || row.body_enc !== null;

/** The operation the transaction's changes belong to: the versions they append name it (migration 010). */
export async function nameOperation(tx: Queryable, operationId: string): Promise<void> {
  await tx.query("SELECT set_config('mnemos.operation_id', $1, true)", [operationId]);
}
