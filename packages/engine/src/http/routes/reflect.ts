import { Type } from '@sinclair/typebox';
import type { Engine } from '../../engine.js';
import type { TypedApp } from '../app.js';
import { problem } from '@mnemos/problems';
import { BANK_ID_PATTERN, BankParams, OperationParams } from '../schemas.js';

const problemRef = { $ref: 'Problem#' };
const open = { additionalProperties: true } as const;

export const ReflectBody = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 200_000 }),
    space: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    budget: Type.Optional(Type.Union([Type.Literal('low'), Type.Literal('mid'), Type.Literal('high'), Type.Integer({ minimum: 1, maximum: 5000 }), Type.Null()])),
    context: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    include: Type.Optional(Type.Union([Type.Object({}, open), Type.Null()])),
    response_schema: Type.Optional(Type.Union([Type.Object({}, open), Type.Null()])),
    max_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000 }), Type.Null()])),
    fact_types: Type.Optional(Type.Union([Type.Array(Type.String(), { maxItems: 16 }), Type.Null()])),
    types: Type.Optional(Type.Union([Type.Array(Type.String(), { maxItems: 16 }), Type.Null()])),
    tags: Type.Optional(Type.Union([Type.Array(Type.String({ maxLength: 256 }), { maxItems: 100 }), Type.String(), Type.Null()])),
    tags_match: Type.Optional(Type.Union([...['any', 'all', 'any_strict', 'all_strict', 'exact'].map((v) => Type.Literal(v)), Type.Null()])),
    query_timestamp: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  open,
);

export type ReflectBodyT = typeof ReflectBody.static;

const notConfigured = () => problem('llm_not_configured', 'noLlm');

/** Reflect and operation status. Without an LLM, reflect answers 503 llm_not_configured; the LLM layer fills these in. */
export function registerReflectRoutes(app: TypedApp, engine: Engine): void {
  app.post('/v1/:tenant/banks/:bank/reflect', {
    schema: { tags: ['reflect'], operationId: 'reflectBank', summary: 'Answer a question from memory, with citations', params: BankParams, body: ReflectBody, response: { 400: problemRef, 401: problemRef, 503: problemRef } },
  }, async (req) => {
    if (!engine.reflector) throw notConfigured();
    return engine.reflector(req.params.tenant, req.params.bank, req.body);
  });

  app.post('/v1/reflect', {
    schema: { tags: ['operations'], operationId: 'reflect', summary: 'Answer a question from a bank, with citations', body: Type.Composite([ReflectBody, Type.Object({ bank_id: Type.String({ pattern: BANK_ID_PATTERN }) })], open), response: { 400: problemRef, 401: problemRef, 503: problemRef } },
  }, async (req) => {
    if (!engine.reflector) throw notConfigured();
    return engine.reflector('default', req.body.bank_id, req.body);
  });

  app.get('/v1/:tenant/operations/:id', {
    schema: { tags: ['operations'], operationId: 'getOperation', summary: 'Status of an async retain or extraction', params: OperationParams, response: { 404: problemRef } },
  }, async (req) => {
    const op = engine.operations ? await engine.operations(req.params.tenant, req.params.id) : undefined;
    if (!op) throw problem('operation_not_found', 'unknown', { id: req.params.id });
    return op;
  });
}
