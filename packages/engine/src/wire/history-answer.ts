import type { MemoryVersion } from '../service/types.js';
import { isoText } from './iso-dates.js';

/** A memory's history in its JSON shape: its versions, oldest first, `operation_id` only where a change had one. */
export function historyAnswer(versions: readonly MemoryVersion[]) {
  return {
    items: versions.map((v) => ({
      version: v.version,
      change: v.change,
      text: v.text,
      metadata: v.metadata,
      state: v.state,
      valid_from: isoText(v.validFrom),
      valid_to: v.validTo === null ? null : isoText(v.validTo),
      superseded_by: v.supersededBy,
      changed_at: isoText(v.changedAt),
      ...(v.operationId !== null ? { operation_id: v.operationId } : {}),
    })),
  };
}
