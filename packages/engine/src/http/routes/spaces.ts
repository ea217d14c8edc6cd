import type { Engine } from '../../engine.js';
import { ORG_BANK_ID } from '../../memory/types.js';
import type { TypedApp } from '../app.js';
import { RecallAnswer, RecallBody, RetainAnswer, RetainBody, SpaceParams } from '../schemas.js';
import { maxNewMemories, plainJsonAnswers, recallOperation, retainOperation } from '../service.js';

const problemRef = { $ref: 'Problem#' };
const errors = { 400: problemRef, 401: problemRef, 404: problemRef, 413: problemRef };

/** Each space has one org bank: shared organisation memory, blended into bank recalls with include_org. */
export function registerSpaceRoutes(app: TypedApp, engine: Engine): void {
  app.post('/v1/:tenant/spaces/:space/memories', {
    schema: { tags: ['spaces'], operationId: 'retainOrgMemories', summary: "Retain into a space's org memory", params: SpaceParams, body: RetainBody, response: { 200: RetainAnswer, ...errors } },
  }, async (req) => {
    const partition = { tenant: req.params.tenant, bankId: ORG_BANK_ID, space: req.params.space };
    const body = { ...req.body, space: req.params.space };
    const answer = await retainOperation(engine, partition, body, maxNewMemories(req.headers));
    return { ...answer, bank_id: `org:${req.params.space}` };
  });

  app.post('/v1/:tenant/spaces/:space/memories/recall', {
    ...plainJsonAnswers,
    schema: { tags: ['spaces'], operationId: 'recallOrgMemories', summary: "Recall from a space's org memory", params: SpaceParams, body: RecallBody, response: { 200: RecallAnswer, ...errors } },
  }, async (req) => recallOperation(engine, req.params.tenant, ORG_BANK_ID, { ...req.body, space: req.params.space, include_org: false }));
}
