import { randomUUID } from 'node:crypto';
import type { ImportRecord } from '../memory/import.js';
import { Problem } from '@mnemos/problems';
import { DEFAULT_SPACE, MEMORY_TYPES, type BatchPlace, type Metadata, type MemoryType } from '../memory/types.js';
import { isIsoDateText, isoDate } from '../util/iso-date.js';
import { checkMetadata } from './metadata.js';
import { SPACE_PATTERN } from './schemas.js';

/**
 * The lines of an import as records: a Mnemos export line (the fields of GET .../export), or a memory as mem0's
 * get_all answers it (docs/api.md, "Export and import"). A line that is neither answers its problem as one sentence.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SPACE = new RegExp(SPACE_PATTERN);
/** mem0's scoping ids: each becomes a metadata key of the same name, so a filter on it selects what mem0 scoped. */
const MEM0_SCOPES = ['user_id', 'agent_id', 'app_id', 'run_id', 'actor_id', 'role'] as const;

/** The largest position a stored row's `seq` (a Postgres integer) holds. */
const MAX_BATCH_SEQ = 2_147_483_647;

class LineProblem extends Error {}

type Fields = Record<string, unknown>;

/** A line's record, or the problem with it. `space`, when given, is where every line goes. */
export function importRecord(value: unknown, space: string | undefined): ImportRecord | { problem: string } {
  try {
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw new LineProblem('is not a JSON object');
    const fields = value as Fields;
    const record = typeof fields['memory'] === 'string' && fields['text'] === undefined ? mem0(fields) : mnemos(fields);
    if (space !== undefined) record.space = space;
    return record;
  } catch (error) {
    if (error instanceof LineProblem) return { problem: error.message };
    throw error;
  }
}

/** A mem0 get_all document's memories: its `results` (v2 and the open-source Memory), or the list itself (v1). */
export function mem0Memories(document: unknown): unknown[] {
  if (Array.isArray(document)) return document;
  const results = document !== null && typeof document === 'object' ? (document as Fields)['results'] : undefined;
  if (Array.isArray(results)) return results;
  throw new LineProblem('is not a mem0 export: expected a list of memories or an object with `results`');
}

export { LineProblem as TransferProblem };

function mnemos(f: Fields): ImportRecord {
  const occurredAt = optionalDate(f, 'occurred_at');
  const createdAt = optionalDate(f, 'created_at') ?? new Date();
  return {
    id: id(f['id']),
    space: space(f['space']),
    type: type(f['type']),
    text: text(f['text'], 'text'),
    context: optionalText(f, 'context'),
    metadata: metadataOf(f['metadata']),
    tags: strings(f['tags'], 'tags'),
    entities: strings(f['entities'], 'entities'),
    documentId: optionalText(f, 'document_id'),
    sourceId: f['source_id'] === undefined || f['source_id'] === null ? null : uuid(f['source_id'], 'source_id'),
    occurredAt,
    createdAt,
    updatedAt: optionalDate(f, 'updated_at') ?? createdAt,
    state: state(f['state']),
    validFrom: optionalDate(f, 'valid_from'),
    validTo: optionalDate(f, 'valid_to'),
    expiresAt: optionalDate(f, 'expires_at'),
    supersededBy:
      f['superseded_by'] === undefined || f['superseded_by'] === null
        ? null
        : uuid(f['superseded_by'], 'superseded_by'),
    place: placeOf(f),
  };
}

/** A line's place in the call that stored it: `batch_id` and `batch_seq` together, or neither. */
function placeOf(f: Fields): BatchPlace | null {
  const batchId = f['batch_id'] ?? null;
  const seq = f['batch_seq'] ?? null;
  if (batchId === null && seq === null) return null;
  if (batchId === null || seq === null) throw new LineProblem('batch_id and batch_seq come together, or neither');
  if (typeof seq !== 'number' || !Number.isInteger(seq) || seq < 0 || seq > MAX_BATCH_SEQ) {
    throw new LineProblem(`batch_seq must be a whole number from 0 to ${MAX_BATCH_SEQ}`);
  }
  return { batchId: uuid(batchId, 'batch_id'), seq };
}

/**
 * A mem0 memory: `memory` is the text, `categories` the tags, the scoping ids and `metadata` the metadata (its values
 * as they are), `created_at` its date. mem0's ids are UUIDs and are kept.
 */
function mem0(f: Fields): ImportRecord {
  const scopes: Record<string, string> = {};
  for (const scope of MEM0_SCOPES) {
    const value = f[scope];
    if (typeof value === 'string' && value !== '') scopes[scope] = value;
  }
  const metadata = metadataOf({ ...withoutNulls(f['metadata']), ...scopes });
  const createdAt = optionalDate(f, 'created_at') ?? new Date();
  return {
    id: id(f['id']),
    space: DEFAULT_SPACE,
    type: 'raw',
    text: text(f['memory'], 'memory'),
    context: null,
    metadata,
    tags: f['categories'] === null ? [] : strings(f['categories'], 'categories'),
    entities: [],
    documentId: null,
    sourceId: null,
    occurredAt: createdAt,
    createdAt,
    updatedAt: optionalDate(f, 'updated_at') ?? createdAt,
    state: 'valid',
    validFrom: null,
    validTo: null,
    expiresAt: optionalDate(f, 'expiration_date'),
    supersededBy: null,
    place: null,
  };
}

/** A record keeps its id; a line without one gets a new id. */
const id = (value: unknown): string => (value === undefined || value === null ? randomUUID() : uuid(value, 'id'));

function uuid(value: unknown, name: string): string {
  if (typeof value !== 'string' || !UUID.test(value)) throw new LineProblem(`${name} must be a UUID`);
  return value.toLowerCase();
}

function text(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new LineProblem(`${name} must be non-empty text`);
  return noNul(value, name);
}

function noNul(value: string, name: string): string {
  if (value.includes('\u0000')) throw new LineProblem(`${name} contains a NUL character, which cannot be stored`);
  return value;
}

function optionalText(f: Fields, name: string): string | null {
  const value = f[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new LineProblem(`${name} must be text or null`);
  return noNul(value, name);
}

function optionalDate(f: Fields, name: string): Date | null {
  const value = f[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !isIsoDateText(value.trim()) || Number.isNaN(isoDate(value.trim()).getTime())) {
    throw new LineProblem(`${name} must be an ISO 8601 date-time such as 2024-01-15T10:30:00Z`);
  }
  return isoDate(value.trim());
}

function space(value: unknown): string {
  if (value === undefined || value === null) return DEFAULT_SPACE;
  if (typeof value !== 'string' || !SPACE.test(value))
    throw new LineProblem('space must be 1 to 128 of A-Z a-z 0-9 . _ : @ + -');
  return value;
}

function type(value: unknown): MemoryType {
  if (value === undefined || value === null) return 'raw';
  if (typeof value !== 'string' || !(MEMORY_TYPES as readonly string[]).includes(value)) {
    throw new LineProblem(`type must be one of ${MEMORY_TYPES.join(', ')}`);
  }
  return value as MemoryType;
}

function state(value: unknown): 'valid' | 'invalidated' {
  if (value === undefined || value === null || value === 'valid') return 'valid';
  if (value === 'invalidated') return 'invalidated';
  throw new LineProblem('state must be valid or invalidated');
}

function strings(value: unknown, name: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))
    throw new LineProblem(`${name} must be a list of strings`);
  return (value as string[]).map((v) => noNul(v, name));
}

/** A line's metadata: any JSON object within the bounds a retain's metadata has, checked by the same rule. */
function metadataOf(value: unknown): Metadata {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new LineProblem('metadata must be an object');
  try {
    return checkMetadata(value as Record<string, unknown>, '/metadata') ?? {};
  } catch (error) {
    if (error instanceof Problem) throw new LineProblem(error.detail);
    throw error;
  }
}

/** mem0's metadata without its null values, which mem0 writes for keys it has no value for. */
function withoutNulls(value: unknown): Fields {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new LineProblem('metadata must be an object');
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null));
}
