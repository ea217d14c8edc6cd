import type { Engine } from '../../engine.js';
import { DEFAULT_SPACE } from '../../memory/types.js';
import { recallAnswer, retainAnswer } from '../../wire/answers.js';
import { maxNewMemories, recallQuery, retainRequest } from '../../wire/input.js';
import { RecallAnswer, RecallWithBankBody, RetainAnswer, RetainWithBankBody } from '../../wire/schemas.js';
import type { TypedApp } from '../typed-app.js';
import { answers, plainJsonAnswers, retainHeaders } from '../responses.js';

const tags = ['operations'];

/** Description-level operations: the bank travels in the body. These are the operationIds agents' tools map to. */
export function registerDescriptionRoutes(app: TypedApp, engine: Engine): void {
  app.post(
    '/v1/retain',
    {
      schema: {
        tags,
        operationId: 'retain',
        summary: 'Retain memories into a bank',
        body: RetainWithBankBody,
        ...answers({ 200: RetainAnswer }, ['too_many_memories']),
      },
    },
    async (req, reply) => {
      const partition = { tenant: 'default', bankId: req.body.bank_id, space: req.body.space ?? DEFAULT_SPACE };
      const result = await engine.service.retain(retainRequest(partition, req.body, maxNewMemories(req.headers)));
      reply.headers(retainHeaders(result));
      return retainAnswer(partition.bankId, result, req.body.messages?.length);
    },
  );

  app.post(
    '/v1/recall',
    {
      ...plainJsonAnswers,
      schema: {
        tags,
        operationId: 'recall',
        summary: 'Recall memories from a bank',
        body: RecallWithBankBody,
        ...answers({ 200: RecallAnswer }),
      },
    },
    async (req) => recallAnswer(await engine.service.recall(recallQuery('default', req.body.bank_id, req.body))),
  );
}
