import type { MemoryVersion } from '../service/types.js';

/** A memory's history in its JSON shape: its versions, oldest first, `operation_id` only where a change had one. */
export function historyAnswer(versions: readonly MemoryVersion[]) {
  return {
    items: versions.map((v) => ({
      version: v.version,
      change: v.change,
      text: v.text,
      metadata: v.metadata,
      state: v.state,
      valid_from: v.validFrom.toISOString(),
      valid_to: v.validTo === null ? null : v.validTo.toISOString(),
      superseded_by: v.supersededBy,
      changed_at: v.changedAt.toISOString(),
      ...(v.operationId !== null ? { operation_id: v.operationId } : {}),
    })),
  };
}
