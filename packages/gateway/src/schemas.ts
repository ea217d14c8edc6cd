// TypeBox schemas of the gateway's own routes (keys, clients, usage) and its OpenAPI document. The calls it forwards to
// an engine take the engine's own request schemas (@mnemos/engine/wire), so both accept and refuse the same requests.
import { Type } from '@sinclair/typebox';
import { BANK_ID_PATTERN, SPACE_PATTERN } from '@mnemos/engine/wire';
import { SCOPES } from './scopes.js';

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
