import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { MAX_LIST_OFFSET } from '@mnemos/http-input';

/**
 * Every request and response shape of the engine's public API (HTTP, and the MCP tools' patterns), in one place. Fastify validates requests with these and
 * @fastify/swagger builds /openapi.json from them. Objects accept unknown fields (Hindsight clients send many we do
 * not use); unknown fields are ignored.
 */

const open = { additionalProperties: true } as const;

export const BANK_ID_PATTERN = '^[A-Za-z0-9._:@+\\-]{1,256}$';
export const TENANT_PATTERN = '^[a-z0-9_\\-]{1,64}$';
export const SPACE_PATTERN = '^[A-Za-z0-9._:@+\\-]{1,128}$';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

const Cursor = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: "A previous page's next_cursor: this page starts after it (not combined with offset)",
});
const NextCursor = Nullable(
  Type.String({
    description: 'Pass as cursor for the next page; null when this page is not full (there is no more)',
  }),
);

export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ pointer: Type.String(), detail: Type.String() }))),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details' },
);

export const TenantParams = Type.Object({
  tenant: Type.String({ pattern: TENANT_PATTERN, description: 'Tenant; `default` on a self-hosted engine' }),
});
export const BankParams = Type.Object({
  tenant: Type.String({ pattern: TENANT_PATTERN }),
  bank: Type.String({ pattern: BANK_ID_PATTERN, description: 'Bank id (URL-encoded)' }),
});
export const MemoryParams = Type.Object({
  tenant: Type.String({ pattern: TENANT_PATTERN }),
  bank: Type.String({ pattern: BANK_ID_PATTERN }),
  id: Type.String({ format: 'uuid', description: 'Memory id (UUID)' }),
});
export const SpaceParams = Type.Object({
  tenant: Type.String({ pattern: TENANT_PATTERN }),
  space: Type.String({ pattern: SPACE_PATTERN }),
});
export const OperationParams = Type.Object({
  tenant: Type.String({ pattern: TENANT_PATTERN }),
  id: Type.String({ format: 'uuid' }),
});

/**
 * The path parameters without the tenant, for a front door (the gateway) whose tenant comes from the credential: the
 * same checks on the same names as the engine's own paths.
 */
export const BankPath = Type.Omit(BankParams, ['tenant']);
export const MemoryPath = Type.Omit(MemoryParams, ['tenant']);
export const SpacePath = Type.Omit(SpaceParams, ['tenant']);
export const OperationPath = Type.Omit(OperationParams, ['tenant']);

const Space = Type.String({ pattern: SPACE_PATTERN, description: 'Space (organization); `default` when omitted' });
const Tags = Type.Union([Type.Array(Type.String({ maxLength: 256 }), { maxItems: 100 }), Type.String(), Type.Null()], {
  description: 'Tags; a JSON-encoded list or a single string is accepted too',
});
/** Any JSON value; wire/metadata.ts bounds its size and depth with a pointer to what is over. */
const MetadataValue = Type.Unknown({ description: 'Any JSON value: string, number, boolean, null, list or object' });
const MetadataMap = Type.Record(Type.String({ maxLength: 256 }), MetadataValue, {
  description:
    'Any JSON under string keys (a string map is one case), at most 8 levels deep, 64 KiB as JSON, keys up to 256 ' +
    'and strings up to 10,000 characters',
});
const Metadata = Nullable(MetadataMap);
const Timestamp = Nullable(
  Type.String({ description: 'ISO 8601 date or date-time (Z, offsets, fractions, date-only) or "unset"' }),
);
const ExpiresAt = Nullable(
  Type.String({
    maxLength: 64,
    description:
      'RFC 3339 date-time (or a date: midnight UTC) when the memory is forgotten: no read answers it from then on ' +
      'and it is deleted with its facts within a minute; a time already past forgets it at once; null: kept',
  }),
);
/** Most memories one item or message may supersede. */
export const MAX_SUPERSEDES = 100;
const Supersedes = Type.Array(Type.String({ format: 'uuid' }), {
  maxItems: MAX_SUPERSEDES,
  description:
    "Ids of memories of the same bank and space this one replaces: their validity ends at this one's valid_from " +
    '(its timestamp, else now) and superseded_by names it',
});
const AsOf = Type.String({
  maxLength: 64,
  description: 'RFC 3339 date-time: answer the memories that were valid then (valid_from <= as_of < valid_to)',
});
const IncludeSuperseded = Type.Boolean({
  description: 'Answer memories whose validity has ended too (marked by valid_to and superseded_by)',
});
/** Recall's, reflect's and the list's choice of memories by validity (current ones by default). */
const ValidityFields = {
  as_of: Type.Optional(Nullable(AsOf)),
  include_superseded: Type.Optional(Nullable(IncludeSuperseded)),
};

export const RetainItemBody = Type.Object(
  {
    content: Type.String({ minLength: 1, description: 'Text to remember' }),
    timestamp: Type.Optional(Timestamp),
    context: Type.Optional(Nullable(Type.String())),
    metadata: Type.Optional(Metadata),
    tags: Type.Optional(Tags),
    document_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 512 }))),
    entities: Type.Optional(
      Nullable(
        Type.Array(Type.Object({ text: Type.String({ minLength: 1 }), type: Type.Optional(Type.String()) }, open)),
      ),
    ),
    supersedes: Type.Optional(Supersedes),
    expires_at: Type.Optional(ExpiresAt),
  },
  open,
);

/** The roles a chat message may have (OpenAI's chat roles); the role is the speaker when the message has no name. */
export const CHAT_ROLES = ['user', 'assistant', 'system', 'tool', 'developer'] as const;

/** Most items and messages one retain call takes, together. */
export const MAX_RETAIN_ENTRIES = 1000;

export const RetainMessageBody = Type.Object(
  {
    role: Type.String({
      enum: [...CHAT_ROLES],
      description: 'Who sent the turn: user, assistant, system, tool, developer',
    }),
    content: Type.String({ minLength: 1, description: 'What was said' }),
    name: Type.Optional(
      Nullable(Type.String({ description: 'The speaker (1 to 40 characters, no colon); the role when absent' })),
    ),
    timestamp: Type.Optional(Timestamp),
    supersedes: Type.Optional(Supersedes),
    expires_at: Type.Optional(ExpiresAt),
  },
  open,
);

export const RetainBody = Type.Object(
  {
    content: Type.Optional(Type.String({ minLength: 1 })),
    items: Type.Optional(Type.Array(RetainItemBody, { minItems: 1, maxItems: MAX_RETAIN_ENTRIES })),
    messages: Type.Optional(
      Type.Array(RetainMessageBody, {
        minItems: 1,
        maxItems: MAX_RETAIN_ENTRIES,
        description:
          'Chat turns, stored one memory each as "speaker: content" with metadata role and speaker; ' +
          'alone or beside items (the top-level fields are their defaults too)',
      }),
    ),
    space: Type.Optional(Nullable(Space)),
    timestamp: Type.Optional(Timestamp),
    context: Type.Optional(Nullable(Type.String())),
    metadata: Type.Optional(Metadata),
    tags: Type.Optional(Tags),
    document_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 512 }))),
    async: Type.Optional(Nullable(Type.Boolean())),
    supersedes: Type.Optional(Supersedes),
    expires_at: Type.Optional(ExpiresAt),
  },
  {
    ...open,
    description:
      'Either `{content, ...}` for one memory, or `{items: [{content, ...}]}` and/or ' +
      '`{messages: [{role, content, name?, timestamp?}]}` for a batch',
  },
);
export type RetainBodyT = Static<typeof RetainBody>;

export const Usage = Type.Object(
  {
    input_tokens: Type.Integer(),
    output_tokens: Type.Integer(),
    total_tokens: Type.Integer(),
  },
  open,
);

export const RetainAnswer = Type.Object({
  success: Type.Boolean(),
  bank_id: Type.String(),
  items_count: Type.Integer(),
  memory_ids: Type.Array(Type.String()),
  stored_count: Type.Optional(
    Type.Integer({
      description: 'New memories this call stored (synchronous retains); content already present is not counted',
    }),
  ),
  async: Type.Boolean(),
  operation_id: Type.Optional(Type.String()),
  usage: Type.Optional(Usage),
  messages: Type.Optional(
    Type.Array(
      Type.Object({
        memory_ids: Type.Array(Type.String(), { description: "The message's memories (a long one is split)" }),
        duplicate: Type.Boolean({
          description: 'Nothing new was stored: the same speaker said the same already (ids are the existing ones)',
        }),
      }),
      { description: 'One entry per message sent, in order (synchronous retains)' },
    ),
  ),
});

const Budget = Type.Union(
  [Type.Literal('low'), Type.Literal('mid'), Type.Literal('high'), Type.Integer({ minimum: 1, maximum: 5000 })],
  {
    description: 'Candidate pool: low/mid/high or an explicit number',
  },
);
const TagsMatch = Type.Union(
  ['any', 'all', 'any_strict', 'all_strict', 'exact'].map((v) => Type.Literal(v)),
  { description: '`any`/`all` also match untagged memories; the `_strict` forms do not' },
);

/** A filter expression (docs/api.md, "Filters"): its shape is read by filters/parse.ts, which points at a bad node. */
const FilterExpression = Type.Unknown({
  description: 'and/or/not over {FIELD: {OP: VALUE}} conditions (docs/api.md, "Filters")',
});

export const RecallBody = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 200_000 }),
    space: Type.Optional(Nullable(Space)),
    max_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 }))),
    budget: Type.Optional(Nullable(Budget)),
    include_org: Type.Optional(Nullable(Type.Boolean())),
    types: Type.Optional(Nullable(Type.Array(Type.String(), { maxItems: 16 }))),
    tags: Type.Optional(Tags),
    tags_match: Type.Optional(Nullable(TagsMatch)),
    filter: Type.Optional(Nullable(FilterExpression)),
    query_timestamp: Type.Optional(Timestamp),
    trace: Type.Optional(Nullable(Type.Boolean())),
    include: Type.Optional(Nullable(Type.Object({}, open))),
    min_relevance: Type.Optional(
      Nullable(
        Type.Number({
          minimum: 0,
          maximum: 1,
          description: 'Leave out results whose relevance is below this (0 to 1)',
        }),
      ),
    ),
    ...ValidityFields,
  },
  open,
);
export type RecallBodyT = Static<typeof RecallBody>;

/** The description-level bodies (`POST /v1/retain`, `/v1/recall`, `/v1/reflect`) name their bank in `bank_id`. */
const BankIdField = Type.Object({ bank_id: Type.String({ pattern: BANK_ID_PATTERN, description: 'Bank id' }) });
export const RetainWithBankBody = Type.Composite([RetainBody, BankIdField], open);
export const RecallWithBankBody = Type.Composite([RecallBody, BankIdField], open);

const MemoryFields = {
  id: Type.String({ format: 'uuid' }),
  bank_id: Type.String(),
  space: Type.String(),
  type: Type.String(),
  text: Type.String(),
  context: Nullable(Type.String()),
  metadata: MetadataMap,
  tags: Type.Array(Type.String()),
  entities: Type.Array(Type.String()),
  document_id: Nullable(Type.String()),
  source_id: Nullable(Type.String()),
  occurred_at: Nullable(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
  state: Type.String(),
  superseded_by: Nullable(Type.String()),
  valid_from: Type.String({ description: 'When it became true: as set, else occurred_at, else created_at' }),
  valid_to: Nullable(Type.String({ description: 'When it stopped being true; null while current' })),
  expires_at: Nullable(Type.String({ description: 'When it is forgotten; null: kept until deleted' })),
};

export const MemoryAnswer = Type.Object({ ...MemoryFields, fact_type: Type.String() }, { $id: 'Memory' });

export const RecallHitAnswer = Type.Object({
  ...MemoryFields,
  score: Type.Number(),
  scores: Type.Record(Type.String(), Type.Number()),
  relevance: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 1,
      description:
        'Calibrated chance that the result is relevant (a logistic over its cosine and its share of the query terms, ' +
        'the same in any bank); never rises down the list',
    }),
  ),
  truncated: Type.Optional(
    Type.Boolean({ description: 'The text is the memory cut to max_tokens (the best match alone was larger)' }),
  ),
  org: Type.Optional(Type.Boolean()),
  mentioned_at: Type.Optional(Type.String()),
});

export const RecallAnswer = Type.Object({
  results: Type.Array(RecallHitAnswer),
  usage: Type.Object({ tokens: Type.Integer() }),
  entities: Type.Record(Type.String(), Type.Object({}, open)),
  trace: Type.Optional(Type.Object({}, open)),
});

export const MemoryListQuery = Type.Object(
  {
    space: Type.Optional(Space),
    type: Type.Optional(Type.String()),
    q: Type.Optional(Type.String({ maxLength: 2000 })),
    tags: Type.Optional(Type.Union([Type.Array(Type.String()), Type.String()])),
    document_id: Type.Optional(Type.String()),
    state: Type.Optional(Type.Union([Type.Literal('valid'), Type.Literal('invalidated')])),
    since: Type.Optional(Type.String({ description: 'ISO date-time: occurred at or after' })),
    until: Type.Optional(Type.String({ description: 'ISO date-time: occurred before' })),
    filter: Type.Optional(
      Type.String({ maxLength: 65_536, description: 'A filter expression as JSON text (docs/api.md, "Filters")' }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000, default: 100 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_LIST_OFFSET, default: 0 })),
    cursor: Type.Optional(Cursor),
    as_of: Type.Optional(AsOf),
    include_superseded: Type.Optional(IncludeSuperseded),
  },
  open,
);

export const MemoryListAnswer = Type.Object({
  items: Type.Array(MemoryAnswer),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
  next_cursor: Type.Optional(NextCursor),
});

export const MemoryPatchBody = Type.Object(
  {
    text: Type.Optional(Type.String({ minLength: 1 })),
    context: Type.Optional(Nullable(Type.String())),
    tags: Type.Optional(Tags),
    metadata: Type.Optional(Metadata),
    state: Type.Optional(Type.Union([Type.Literal('valid'), Type.Literal('invalidated')])),
    occurred_at: Type.Optional(Timestamp),
    valid_from: Type.Optional(
      Nullable(Type.String({ description: 'RFC 3339 date-time it became true; null: back to its date' })),
    ),
    valid_to: Type.Optional(
      Nullable(Type.String({ description: 'RFC 3339 date-time it stopped being true; null: current again' })),
    ),
    expires_at: Type.Optional(ExpiresAt),
  },
  open,
);

export const ClearQuery = Type.Object({ space: Type.Optional(Space), type: Type.Optional(Type.String()) }, open);

export const BulkDeleteBody = Type.Object(
  {
    filter: FilterExpression,
    space: Type.Optional(Nullable(Space)),
    dry_run: Type.Optional(Nullable(Type.Boolean({ description: 'Count what would be deleted; delete nothing' }))),
  },
  open,
);

/** Most ids one bulk get or update names. */
export const MAX_BULK_IDS = 1000;
const MemoryIds = Type.Array(Type.String({ format: 'uuid' }), { minItems: 1, maxItems: MAX_BULK_IDS });

export const MemorySetBody = Type.Object(
  {
    metadata: Type.Optional(Metadata),
    tags: Type.Optional(Tags),
    state: Type.Optional(Type.Union([Type.Literal('valid'), Type.Literal('invalidated')])),
    expires_at: Type.Optional(ExpiresAt),
  },
  { ...open, description: 'The fields to set on every memory selected; each replaces the old value, as PATCH does' },
);

export const BulkUpdateBody = Type.Object(
  {
    filter: Type.Optional(FilterExpression),
    ids: Type.Optional(MemoryIds),
    set: MemorySetBody,
    space: Type.Optional(Nullable(Space)),
  },
  { ...open, description: 'Either `filter` or `ids` selects the memories' },
);

export const UpdateAnswer = Type.Object({ success: Type.Boolean(), updated_count: Type.Integer() });

export const BulkGetBody = Type.Object({ ids: MemoryIds, space: Type.Optional(Nullable(Space)) }, open);

export const BulkGetAnswer = Type.Object({
  items: Type.Array(
    Type.Object({
      id: Type.String(),
      found: Type.Boolean({ description: 'false: the bank (or space) holds no memory of this id' }),
      memory: Nullable(MemoryAnswer),
    }),
    { description: 'One entry per id asked, in the order asked' },
  ),
});

export const ExportQuery = Type.Object({ space: Type.Optional(Space) }, open);

export const ImportQuery = Type.Object(
  {
    space: Type.Optional(Type.String({ pattern: SPACE_PATTERN, description: 'Every line goes to this space' })),
    format: Type.Optional(
      Type.Union([Type.Literal('ndjson'), Type.Literal('mem0')], {
        description: 'ndjson (default): lines of an export (or of mem0 memories); mem0: one mem0 get_all JSON document',
      }),
    ),
  },
  open,
);

export const ImportAnswer = Type.Object({
  imported: Type.Integer(),
  skipped: Type.Integer({ description: 'Already in the bank: the same id, or the same content in the same space' }),
  failed: Type.Array(
    Type.Object({
      line: Type.Integer({ description: 'The line (format=mem0: the memory) from 1' }),
      problem: Type.String(),
    }),
  ),
});

export const DeleteAnswer = Type.Object({
  success: Type.Boolean(),
  deleted_count: Type.Integer(),
  message: Type.Optional(Type.String()),
});

export const Disposition = Type.Object(
  {
    skepticism: Type.Optional(Type.Integer({ minimum: 1, maximum: 5 })),
    literalism: Type.Optional(Type.Integer({ minimum: 1, maximum: 5 })),
    empathy: Type.Optional(Type.Integer({ minimum: 1, maximum: 5 })),
  },
  open,
);

/** The longest retention a bank may set: a hundred years. */
export const MAX_RETENTION_DAYS = 36_500;
const RetentionDays = Type.Integer({
  minimum: 1,
  maximum: MAX_RETENTION_DAYS,
  description:
    'Days a memory retained without an expires_at of its own is kept: it gets expires_at that long after it is ' +
    'stored. Memories already stored keep theirs; null: kept until deleted',
});

const BankHistorySetting = Type.Union([Type.Literal('on'), Type.Literal('off')], {
  description: "Whether each change to a memory appends a version to its history ('on' by default)",
});

export const BankBody = Type.Object(
  {
    name: Type.Optional(Nullable(Type.String({ maxLength: 256 }))),
    mission: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
    background: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
    reflect_mission: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
    disposition: Type.Optional(Nullable(Disposition)),
    space: Type.Optional(Nullable(Space)),
    history: Type.Optional(Nullable(BankHistorySetting)),
    retention_days: Type.Optional(Nullable(RetentionDays)),
  },
  open,
);
export type BankBodyT = Static<typeof BankBody>;

export const BankAnswer = Type.Object(
  {
    bank_id: Type.String(),
    name: Type.String(),
    mission: Type.String(),
    background: Type.String(),
    disposition: Type.Object({ skepticism: Type.Integer(), literalism: Type.Integer(), empathy: Type.Integer() }),
    space: Type.String(),
    created_at: Type.String(),
    updated_at: Type.String(),
    last_write_at: Nullable(Type.String()),
    memory_count: Type.Integer(),
    usage: Usage,
    history: BankHistorySetting,
    retention_days: Nullable(RetentionDays),
  },
  { $id: 'Bank' },
);

export const BankListQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 256 })),
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000, default: 100 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_LIST_OFFSET, default: 0 })),
    cursor: Type.Optional(Cursor),
  },
  open,
);

export const BankListAnswer = Type.Object({
  banks: Type.Array(BankAnswer),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
  next_cursor: Type.Optional(NextCursor),
});

export const ReflectBody = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 200_000 }),
    space: Type.Optional(Nullable(Type.String())),
    budget: Type.Optional(Nullable(Budget)),
    context: Type.Optional(Nullable(Type.String())),
    include: Type.Optional(Nullable(Type.Object({}, open))),
    response_schema: Type.Optional(Nullable(Type.Object({}, open))),
    max_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 }))),
    fact_types: Type.Optional(Nullable(Type.Array(Type.String(), { maxItems: 16 }))),
    types: Type.Optional(Nullable(Type.Array(Type.String(), { maxItems: 16 }))),
    tags: Type.Optional(Tags),
    tags_match: Type.Optional(Nullable(TagsMatch)),
    filter: Type.Optional(Nullable(FilterExpression)),
    query_timestamp: Type.Optional(Nullable(Type.String())),
    ...ValidityFields,
  },
  open,
);
export type ReflectBodyT = Static<typeof ReflectBody>;
export const ReflectWithBankBody = Type.Composite(
  [ReflectBody, Type.Object({ bank_id: Type.String({ pattern: BANK_ID_PATTERN }) })],
  open,
);

export const MEMORY_CHANGES = ['create', 'update', 'invalidate', 'restore', 'supersede', 'expire', 'delete'] as const;

export const MemoryVersionAnswer = Type.Object({
  version: Type.Integer({ minimum: 1 }),
  change: Type.Union(
    MEMORY_CHANGES.map((c) => Type.Literal(c)),
    { description: 'What changed the memory into this version' },
  ),
  text: Nullable(Type.String({ description: 'null for a deleted memory: its text is forgotten in every version' })),
  metadata: Nullable(MetadataMap),
  state: Type.String(),
  valid_from: Type.String(),
  valid_to: Nullable(Type.String()),
  superseded_by: Nullable(Type.String()),
  changed_at: Type.String(),
  operation_id: Type.Optional(Type.String({ description: 'The operation the change belongs to, when there is one' })),
});

export const MemoryHistoryAnswer = Type.Object({
  items: Type.Array(MemoryVersionAnswer, { description: 'Oldest first' }),
});
