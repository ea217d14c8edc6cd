// TypeBox schemas shared by routes and the OpenAPI document. Memory bodies are open objects: the engine validates
// them fully (and ignores unknown fields, for Hindsight compatibility); the gateway checks only what it must read.
import { Type, type TSchema } from '@sinclair/typebox';
import { MAX_LIST_OFFSET } from '@mnemos/http-input';
import { SCOPES } from './scopes.js';

export const BANK_ID_PATTERN = '^[A-Za-z0-9._:@+-]{1,256}$';
export const SPACE_PATTERN = '^[A-Za-z0-9._:@+-]{1,256}$';

export const BankParams = Type.Object({
  bank: Type.String({ pattern: BANK_ID_PATTERN, description: 'Bank id (URL-encoded)' }),
});
export const BankMemoryParams = Type.Object({
  bank: Type.String({ pattern: BANK_ID_PATTERN }),
  id: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$', description: 'Memory id (UUID)' }),
});
export const SpaceParams = Type.Object({ space: Type.String({ pattern: SPACE_PATTERN }) });
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' }) });

const Metadata = Type.Record(Type.String(), Type.String());
const RetainItem = Type.Object({
  content: Type.String({ minLength: 1 }),
  timestamp: Type.Optional(Type.String()),
  context: Type.Optional(Type.String()),
  metadata: Type.Optional(Metadata),
  tags: Type.Optional(Type.Array(Type.String())),
  document_id: Type.Optional(Type.String()),
});

// A chat turn; the engine checks the roles, the name and the timestamp.
const RetainMessage = Type.Object({
  role: Type.String(),
  content: Type.String(),
  name: Type.Optional(Type.String()),
  timestamp: Type.Optional(Type.String()),
});

export const RetainBody = Type.Object({
  content: Type.Optional(Type.String({ minLength: 1 })),
  items: Type.Optional(Type.Array(RetainItem, { minItems: 1, maxItems: 1000 })),
  messages: Type.Optional(Type.Array(RetainMessage, { minItems: 1, maxItems: 1000 })),
  space: Type.Optional(Type.String({ pattern: SPACE_PATTERN })),
  timestamp: Type.Optional(Type.String()),
  context: Type.Optional(Type.String()),
  metadata: Type.Optional(Metadata),
  tags: Type.Optional(Type.Array(Type.String())),
  document_id: Type.Optional(Type.String()),
  async: Type.Optional(Type.Boolean()),
});

export const Budget = Type.Union([
  Type.Literal('low'),
  Type.Literal('mid'),
  Type.Literal('high'),
  Type.Integer({ minimum: 1, maximum: 5000 }),
]);

export const RecallBody = Type.Object({
  query: Type.String({ minLength: 1 }),
  space: Type.Optional(Type.String({ pattern: SPACE_PATTERN })),
  max_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  min_relevance: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  budget: Type.Optional(Budget),
  include_org: Type.Optional(Type.Boolean()),
  types: Type.Optional(Type.Array(Type.String())),
  tags: Type.Optional(Type.Array(Type.String())),
  tags_match: Type.Optional(Type.String()),
  query_timestamp: Type.Optional(Type.String()),
  trace: Type.Optional(Type.Boolean()),
});

export const ReflectBody = Type.Object({
  query: Type.String({ minLength: 1 }),
  space: Type.Optional(Type.String({ pattern: SPACE_PATTERN })),
  budget: Type.Optional(Budget),
  context: Type.Optional(Type.String()),
  include: Type.Optional(Type.Object({}, { additionalProperties: true })),
  response_schema: Type.Optional(Type.Object({}, { additionalProperties: true })),
});

const withBank = (schema: TSchema): TSchema =>
  Type.Intersect([Type.Object({ bank_id: Type.String({ pattern: BANK_ID_PATTERN }) }), schema]);
export const RetainTopBody = withBank(RetainBody);
export const RecallTopBody = withBank(RecallBody);
export const ReflectTopBody = withBank(ReflectBody);

export const BankProfileBody = Type.Object({
  name: Type.Optional(Type.String()),
  mission: Type.Optional(Type.String()),
  disposition: Type.Optional(Type.Unknown()),
  space: Type.Optional(Type.String({ pattern: SPACE_PATTERN })),
});

export const MemoryPatchBody = Type.Object({
  text: Type.Optional(Type.String()),
  tags: Type.Optional(Type.Array(Type.String())),
  metadata: Type.Optional(Metadata),
  state: Type.Optional(Type.Literal('invalidated')),
});

export const ListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_LIST_OFFSET })),
  q: Type.Optional(Type.String()),
});

export const MemoryListQuery = Type.Object({
  space: Type.Optional(Type.String({ pattern: SPACE_PATTERN })),
  type: Type.Optional(Type.String()),
  q: Type.Optional(Type.String()),
  tags: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_LIST_OFFSET })),
  cursor: Type.Optional(Type.String({ description: 'next_cursor of the previous page' })),
  since: Type.Optional(Type.String()),
  until: Type.Optional(Type.String()),
});

export const DeleteMemoriesQuery = Type.Object({
  space: Type.Optional(Type.String({ pattern: SPACE_PATTERN })),
  type: Type.Optional(Type.String()),
});

const ScopeSchema = Type.Union(SCOPES.map((s) => Type.Literal(s)));

export const KeyCreateBody = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200 })),
    scopes: Type.Optional(Type.Array(ScopeSchema, { minItems: 1, uniqueItems: true })),
    banks: Type.Optional(
      Type.Array(Type.String({ pattern: BANK_ID_PATTERN }), { minItems: 1, maxItems: 1000, uniqueItems: true }),
    ),
    spaces: Type.Optional(
      Type.Array(Type.String({ pattern: SPACE_PATTERN }), { minItems: 1, maxItems: 1000, uniqueItems: true }),
    ),
    expires_at: Type.Optional(Type.String({ format: 'date-time' })),
    rate_limit_per_minute: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
  },
  { additionalProperties: false },
);

export const KeyCreated = Type.Object({
  id: Type.String(),
  key: Type.String({ description: 'The secret: shown only in this answer' }),
  prefix: Type.String(),
  scopes: Type.Array(Type.String()),
  banks: Type.Union([Type.Array(Type.String()), Type.Null()]),
  spaces: Type.Union([Type.Array(Type.String()), Type.Null()]),
  expires_at: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
});

export const ClientCreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    scopes: Type.Array(ScopeSchema, { minItems: 1, uniqueItems: true }),
    redirect_uris: Type.Optional(Type.Array(Type.String({ format: 'uri', maxLength: 2000 }), { maxItems: 20 })),
  },
  { additionalProperties: false },
);

export const UsageSchema = Type.Object({
  period: Type.String(),
  resets_at: Type.String(),
  plan: Type.String(),
  memories: Type.Object({ used: Type.Integer(), limit: Type.Integer() }),
  recalls: Type.Object({ used: Type.Integer(), limit: Type.Integer() }),
  reflects: Type.Object({ used: Type.Integer(), limit: Type.Integer() }),
  daily: Type.Array(
    Type.Object({
      date: Type.String({ description: 'UTC day, YYYY-MM-DD' }),
      memories: Type.Integer(),
      recalls: Type.Integer(),
      reflects: Type.Integer(),
    }),
    { description: 'Each day of the month so far, with the units counted on it' },
  ),
});

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ pointer: Type.String(), detail: Type.String() }))),
  },
  { $id: 'Problem', additionalProperties: true },
);

export const Open = Type.Object({}, { additionalProperties: true });
