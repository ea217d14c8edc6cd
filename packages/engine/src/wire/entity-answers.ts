import type { Entity, EntityDetail, EntityEvent, EntityPage } from '../service/entities.js';
import { memoryAnswer } from './answers.js';

/** An entity's wire fields. */
function entityFields(e: Entity) {
  return {
    name: e.name,
    kinds: e.kinds,
    memory_count: e.memoryCount,
    first_seen: e.firstSeen.toISOString(),
    last_seen: e.lastSeen.toISOString(),
  };
}

export const entityPageAnswer = (page: EntityPage) => ({
  items: page.items.map(entityFields),
  total: page.total,
  limit: page.limit,
  next_cursor: page.nextCursor,
});

const eventAnswer = (e: EntityEvent) => ({
  at: e.at.toISOString(),
  change: e.change,
  memory_id: e.memoryId,
  version: e.version,
  text: e.text,
  valid_from: e.validFrom.toISOString(),
  valid_to: e.validTo === null ? null : e.validTo.toISOString(),
  superseded_by: e.supersededBy,
  changed_at: e.changedAt === null ? null : e.changedAt.toISOString(),
});

export const entityAnswer = (e: EntityDetail) => ({
  ...entityFields(e),
  facts: e.facts.map(memoryAnswer),
  timeline: e.timeline.map(eventAnswer),
});
