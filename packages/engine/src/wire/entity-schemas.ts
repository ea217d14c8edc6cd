import { Type, type TSchema } from '@sinclair/typebox';
import { BANK_ID_PATTERN, MEMORY_CHANGES, MemoryAnswer, SPACE_PATTERN, TENANT_PATTERN } from './schemas.js';

/** The request and answer shapes of a bank's entities (docs/api.md, "Entities"). */

const open = { additionalProperties: true } as const;
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const ENTITY_KINDS = ['speaker', 'name', 'extracted', 'given'] as const;
const MAX_NAME_CHARS = 200;

const EntityName = Type.String({
  minLength: 1,
  maxLength: MAX_NAME_CHARS,
  description: 'An entity name as its memories write it (any case; URL-encoded)',
});
const Space = Type.String({ pattern: SPACE_PATTERN, description: 'Only the memories of this space' });

export const EntityParams = Type.Object({
  tenant: Type.String({ pattern: TENANT_PATTERN }),
  bank: Type.String({ pattern: BANK_ID_PATTERN }),
  name: EntityName,
});
export const EntityPath = Type.Omit(EntityParams, ['tenant']);

export const EntityListQuery = Type.Object(
  {
    space: Type.Optional(Space),
    prefix: Type.Optional(
      Type.String({ minLength: 1, maxLength: MAX_NAME_CHARS, description: 'Names starting with this (any case)' }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: "A previous page's next_cursor: this page starts after it",
      }),
    ),
  },
  open,
);

export const EntityQuery = Type.Object(
  {
    space: Type.Optional(Space),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1000,
        default: 100,
        description: 'Memories naming the entity read for its facts and timeline, latest first',
      }),
    ),
  },
  open,
);

const EntityFields = {
  name: Type.String(),
  kinds: Type.Array(Type.Union(ENTITY_KINDS.map((k) => Type.Literal(k))), {
    description: 'How it was found: speaker and name by the cheap extractor, extracted by the LLM, given by the caller',
  }),
  memory_count: Type.Integer({ description: 'Memories naming it (invalidated ones aside)' }),
  first_seen: Type.String({ description: 'The earliest valid_from of the memories naming it' }),
  last_seen: Type.String({ description: 'The latest valid_from of the memories naming it' }),
};

export const EntitySummary = Type.Object(EntityFields, { $id: 'Entity' });

export const EntityListAnswer = Type.Object({
  items: Type.Array(EntitySummary),
  total: Type.Integer(),
  limit: Type.Integer(),
  next_cursor: Nullable(Type.String({ description: 'Pass as cursor for the next page; null when there is no more' })),
});

export const EntityEventAnswer = Type.Object({
  at: Type.String({ description: 'When the change took effect: valid_from for a create, valid_to for an end' }),
  change: Type.Union(MEMORY_CHANGES.map((c) => Type.Literal(c))),
  memory_id: Type.String(),
  version: Nullable(Type.Integer({ description: "The history version; null when read from the memory's validity" })),
  text: Nullable(Type.String()),
  valid_from: Type.String(),
  valid_to: Nullable(Type.String()),
  superseded_by: Nullable(Type.String()),
  changed_at: Nullable(Type.String()),
});

export const EntityAnswer = Type.Object({
  ...EntityFields,
  facts: Type.Array(MemoryAnswer, { description: 'The current memories naming it, latest first' }),
  timeline: Type.Array(EntityEventAnswer, { description: 'Oldest first' }),
});
