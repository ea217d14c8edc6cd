import { Type } from '@sinclair/typebox';
import type { Engine } from '../../engine.js';
import { operationAnswer, reflectAnswer } from '../../wire/answers.js';
import { reflectRequest } from '../../wire/input.js';
import { BANK_ID_PATTERN, BankParams, OperationParams, ReflectBody } from '../../wire/schemas.js';
import type { TypedApp } from '../typed-app.js';
import { answers } from '../responses.js';

const open = { additionalProperties: true } as const;
const REFLECT_PROBLEMS = [
  'llm_not_configured',
  'llm_timeout',
  'llm_bad_answer',
  'llm_rejected',
  'llm_unavailable',
] as const;

/** Reflect (needs an LLM: without one it answers 503 llm_not_configured) and operation status. */
export function registerReflectRoutes(app: TypedApp, engine: Engine): void {
  app.post(
    '/v1/:tenant/banks/:bank/reflect',
    {
      schema: {
        tags: ['reflect'],
        operationId: 'reflectBank',
        summary: 'Answer a question from memory, with citations',
        params: BankParams,
        body: ReflectBody,
        ...answers({}, REFLECT_PROBLEMS),
      },
    },
    async (req) => {
      const request = reflectRequest(req.params.tenant, req.params.bank, req.body);
      return reflectAnswer(await engine.service.reflect(request));
    },
  );

  app.post(
    '/v1/reflect',
    {
      schema: {
        tags: ['operations'],
        operationId: 'reflect',
        summary: 'Answer a question from a bank, with citations',
        body: Type.Composite([ReflectBody, Type.Object({ bank_id: Type.String({ pattern: BANK_ID_PATTERN }) })], open),
        ...answers({}, REFLECT_PROBLEMS),
      },
    },
    async (req) => reflectAnswer(await engine.service.reflect(reflectRequest('default', req.body.bank_id, req.body))),
  );

  app.get(
    '/v1/:tenant/operations/:id',
    {
      schema: {
        tags: ['operations'],
        operationId: 'getOperation',
        summary: 'Status of an async retain or extraction',
        params: OperationParams,
        ...answers({}, ['operation_not_found']),
      },
    },
    async (req) => operationAnswer(await engine.service.operation(req.params.tenant, req.params.id)),
  );
}
