import { Type } from '@sinclair/typebox';
import type { Engine } from '../../engine.js';
import { DEFAULT_SPACE } from '../../memory/types.js';
import type { TypedApp } from '../app.js';
import { BANK_ID_PATTERN, RecallAnswer, RecallBody, RetainAnswer, RetainBody } from '../schemas.js';
import { maxNewMemories, plainJsonAnswers, recallOperation, retainOperation } from '../service.js';

const problemRef = { $ref: 'Problem#' };
const errors = { 400: problemRef, 401: problemRef, 413: problemRef };
const BankId = { bank_id: Type.String({ pattern: BANK_ID_PATTERN, description: 'Bank id' }) };

/** Description-level operations: the bank travels in the body. These are the operationIds agents' tools map to. */
export function registerDescriptionRoutes(app: TypedApp, engine: Engine): void {
  app.post('/v1/retain', {
    schema: { tags: ['operations'], operationId: 'retain', summary: 'Retain memories into a bank', body: Type.Composite([RetainBody, Type.Object(BankId)], { additionalProperties: true }), response: { 200: RetainAnswer, ...errors } },
  }, async (req) => {
    const partition = { tenant: 'default', bankId: req.body.bank_id, space: req.body.space ?? DEFAULT_SPACE };
    return retainOperation(engine, partition, req.body, maxNewMemories(req.headers));
  });

  app.post('/v1/recall', {
    ...plainJsonAnswers,
    schema: { tags: ['operations'], operationId: 'recall', summary: 'Recall memories from a bank', body: Type.Composite([RecallBody, Type.Object(BankId)], { additionalProperties: true }), response: { 200: RecallAnswer, ...errors } },
  }, async (req) => recallOperation(engine, 'default', req.body.bank_id, req.body));
}

