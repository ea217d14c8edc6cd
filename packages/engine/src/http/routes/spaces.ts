import type { Engine } from '../../engine.js';
import { ORG_BANK_ID } from '../../memory/types.js';
import { recallAnswer, retainAnswer, wireBankId } from '../../wire/answers.js';
import { maxNewMemories, recallQuery, retainRequest } from '../../wire/input.js';
import { RecallAnswer, RecallBody, RetainAnswer, RetainBody, SpaceParams } from '../../wire/schemas.js';
import type { TypedApp } from '../typed-app.js';
import { answers, plainJsonAnswers, retainHeaders } from '../responses.js';

const tags = ['spaces'];

/** Each space has one org bank: shared organisation memory, blended into bank recalls with include_org. */
export function registerSpaceRoutes(app: TypedApp, engine: Engine): void {
  app.post(
    '/v1/:tenant/spaces/:space/memories',
    {
      schema: {
        tags,
        operationId: 'retainOrgMemories',
        summary: "Retain into a space's org memory",
        params: SpaceParams,
        body: RetainBody,
        ...answers({ 200: RetainAnswer }, ['too_many_memories']),
      },
    },
    async (req, reply) => {
      const { tenant, space } = req.params;
      const request = retainRequest({ tenant, bankId: ORG_BANK_ID, space }, req.body, maxNewMemories(req.headers));
      const result = await engine.service.retain(request);
      reply.headers(retainHeaders(result));
      return retainAnswer(wireBankId(ORG_BANK_ID, space), result, req.body.messages?.length);
    },
  );

  app.post(
    '/v1/:tenant/spaces/:space/memories/recall',
    {
      ...plainJsonAnswers,
      schema: {
        tags,
        operationId: 'recallOrgMemories',
        summary: "Recall from a space's org memory",
        params: SpaceParams,
        body: RecallBody,
        ...answers({ 200: RecallAnswer }),
      },
    },
    async (req) => {
      const body = { ...req.body, space: req.params.space, include_org: false };
      return recallAnswer(await engine.service.recall(recallQuery(req.params.tenant, ORG_BANK_ID, body)));
    },
  );
}
