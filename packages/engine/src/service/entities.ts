import { invalidField, problem } from '@mnemos/problems';
import type { BodyCodec } from '../crypto/codec.js';
import type { Queryable } from '../db/database.js';
import { entityNames, getEntity, listEntities, memoriesNaming, type EntityRow } from '../memory/entity-store.js';
import { readHistories, type MemoryChange, type StoredVersion } from '../memory/history-store.js';
import type { EntityKind } from '../memory/mentions.js';
import type { MemoryReader } from '../memory/rows.js';
import type { Memory } from '../memory/types.js';
import { ENTITY_CURSOR, type CursorScope, type CursorSeal } from './cursor.js';

/** A bank's entity: a name its memories carry, how it was found, and when the memories naming it were true. */
export interface Entity {
  name: string;
  kinds: EntityKind[];
  memoryCount: number;
  firstSeen: Date;
  lastSeen: Date;
}

/** One change in an entity's timeline: a version of a memory naming it (or, without history, its validity). */
export interface EntityEvent {
  /** When the change took effect: a memory's valid_from when it was created, its valid_to when it was closed. */
  at: Date;
  change: MemoryChange;
  memoryId: string;
  /** The history version; null when the memory has no history and the event is read from its validity. */
  version: number | null;
  text: string | null;
  validFrom: Date;
  validTo: Date | null;
  supersededBy: string | null;
  changedAt: Date | null;
}

export interface EntityDetail extends Entity {
  /** The current memories naming it (valid now, not superseded), latest first. */
  facts: Memory[];
  /** Oldest first. */
  timeline: EntityEvent[];
}

export interface EntityListQuery {
  tenant: string;
  bankId: string;
  space: string | undefined;
  prefix: string | undefined;
  limit: number;
  cursor: string | undefined;
}

export interface EntityPage {
  items: Entity[];
  total: number;
  limit: number;
  nextCursor: string | null;
}

export interface EntityQuery {
  tenant: string;
  bankId: string;
  space: string | undefined;
  name: string;
  /** Memories read for the facts and the timeline, latest first. */
  limit: number;
}

/** What the entity reads work with. */
export interface EntityParts {
  db: Queryable;
  codec: BodyCodec;
  store: MemoryReader;
}

const ENCRYPTED_PREFIX =
  'cannot be used with encryption at rest: entity names are sealed, so they cannot be matched in the database; ' +
  'leave prefix out and page through the list, or look an entity up by its whole name';

const date = (value: Date | string): Date => (value instanceof Date ? value : new Date(value));

async function entitiesOf(parts: EntityParts, tenant: string, bankId: string, rows: EntityRow[]): Promise<Entity[]> {
  const names = await entityNames(parts.db, parts.codec, tenant, bankId, rows);
  return rows.flatMap((row, i) => {
    const name = names[i];
    if (name === undefined) return [];
    return [
      {
        name,
        kinds: row.kinds,
        memoryCount: row.memory_count,
        firstSeen: date(row.first_seen),
        lastSeen: date(row.last_seen),
      },
    ];
  });
}

/** A page of the bank's entities, in name order (blind-token order under encryption at rest). */
export async function entityPage(parts: EntityParts, seal: () => Promise<CursorSeal>, q: EntityListQuery) {
  const prefix = q.prefix?.trim().toLowerCase();
  if (prefix !== undefined && parts.codec.encrypted) throw invalidField('/query/prefix', ENCRYPTED_PREFIX, 'query');
  const scope: CursorScope = ['entities', q.tenant, q.bankId, q.space ?? null, prefix ?? null];
  const after =
    q.cursor === undefined ? undefined : (await seal()).decode(ENTITY_CURSOR, q.cursor, scope, '/query/cursor').key;
  const { rows, total } = await listEntities(parts.db, {
    tenant: q.tenant,
    bankId: q.bankId,
    space: q.space,
    prefix: prefix === '' ? undefined : prefix,
    after,
    limit: q.limit,
  });
  const last = rows.at(-1);
  const nextCursor =
    last !== undefined && q.limit > 0 && rows.length >= q.limit
      ? (await seal()).encode(ENTITY_CURSOR, { list: 'entities', key: last.key }, scope)
      : null;
  const items = await entitiesOf(parts, q.tenant, q.bankId, rows);
  return { items, total, limit: q.limit, nextCursor } satisfies EntityPage;
}

const isCurrent = (m: Memory, now: number): boolean => m.validTo === null || Date.parse(m.validTo) > now;

/** When a version's change took effect in the world the memory describes. */
function effectiveAt(v: StoredVersion): Date {
  if (v.change === 'create') return v.validFrom;
  if ((v.change === 'supersede' || v.change === 'expire') && v.validTo !== null) return v.validTo;
  return v.changedAt;
}

/** The events of a memory kept no history for: its start, and its end when its validity is closed. */
function eventsFromValidity(m: Memory): EntityEvent[] {
  const base = {
    memoryId: m.id,
    version: null,
    text: m.text,
    validFrom: new Date(m.validFrom),
    validTo: m.validTo === null ? null : new Date(m.validTo),
    supersededBy: m.supersededBy,
    changedAt: null,
  };
  const events: EntityEvent[] = [{ ...base, at: base.validFrom, change: 'create' }];
  if (base.validTo !== null) {
    events.push({ ...base, at: base.validTo, change: m.supersededBy === null ? 'expire' : 'supersede' });
  }
  return events;
}

/** At one instant, a memory's start comes before the end it brings to another (a supersession names its successor). */
const startsFirst = (e: EntityEvent): number => (e.change === 'create' ? 0 : 1);

function timelineOf(memories: readonly Memory[], versions: readonly StoredVersion[]): EntityEvent[] {
  const withHistory = new Set(versions.map((v) => v.memoryId));
  const events: EntityEvent[] = versions.map((v) => ({
    at: effectiveAt(v),
    change: v.change,
    memoryId: v.memoryId,
    version: v.version,
    text: v.text,
    validFrom: v.validFrom,
    validTo: v.validTo,
    supersededBy: v.supersededBy,
    changedAt: v.changedAt,
  }));
  for (const m of memories) if (!withHistory.has(m.id)) events.push(...eventsFromValidity(m));
  return events.sort(
    (a, b) =>
      a.at.getTime() - b.at.getTime() ||
      (a.changedAt?.getTime() ?? 0) - (b.changedAt?.getTime() ?? 0) ||
      startsFirst(a) - startsFirst(b) ||
      a.memoryId.localeCompare(b.memoryId) ||
      (a.version ?? 0) - (b.version ?? 0),
  );
}

/** An entity by name (any case), with its current facts and its timeline; a name no memory carries is a 404. */
export async function entityDetail(parts: EntityParts, q: EntityQuery): Promise<EntityDetail> {
  const notFound = () => problem('entity_not_found', 'inThisBank', { name: q.name });
  const key = await parts.codec.entityKey(parts.db, q.tenant, q.bankId, q.name);
  if (key === undefined) throw notFound();
  const row = await getEntity(parts.db, q.tenant, q.bankId, q.space, key);
  const [entity] = row === undefined ? [] : await entitiesOf(parts, q.tenant, q.bankId, [row]);
  if (entity === undefined) throw notFound();
  const rows = await memoriesNaming(parts.db, q.tenant, q.bankId, q.space, key, q.limit);
  const memories = await parts.store.open(parts.db, q.tenant, rows);
  const versions = await readHistories(
    parts.db,
    parts.codec,
    q.tenant,
    q.bankId,
    memories.map((m) => m.id),
  );
  const now = Date.now();
  return { ...entity, facts: memories.filter((m) => isCurrent(m, now)), timeline: timelineOf(memories, versions) };
}
