import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Engine } from '../../engine.js';
import type { ReflectRequest } from '../../service/types.js';
import { OperationAnswer, reflectSuccess } from '../../wire/answer-schemas.js';
import { operationAnswer, reflectAnswer } from '../../wire/answers.js';
import { reflectRequest } from '../../wire/input.js';
import { BankParams, OperationParams, ReflectBody, ReflectWithBankBody } from '../../wire/schemas.js';
import type { TypedApp } from '../typed-app.js';
import { answers, plainJsonAnswers } from '../responses.js';
import { sendEventStream, wantsEventStream } from '../event-stream.js';

const STREAMING =
  'With `Accept: text/event-stream` the answer streams as server-sent events: `delta` events ({text}) carry the ' +
  "answer's text as the LLM writes it, then a `done` event holds this operation's JSON answer; a failure after the " +
  'first event ends the stream with an `error` event holding a problem document (the status is already 200).';
const REFLECT_PROBLEMS = [
  'llm_not_configured',
  'llm_timeout',
  'llm_bad_answer',
  'llm_rejected',
  'llm_unavailable',
] as const;

/**
 * Reflect (needs an LLM: without one it answers 503 llm_not_configured) and operation status. With
 * `Accept: text/event-stream`, reflect streams `delta` events (the answer's text as the LLM writes it) and ends with a
 * `done` event holding the whole answer, or an `error` event holding a problem.
 */
export function registerReflectRoutes(app: TypedApp, engine: Engine): void {
  const answer = async (req: FastifyRequest, reply: FastifyReply, request: ReflectRequest) => {
    if (!wantsEventStream(req.headers.accept)) return reflectAnswer(await engine.service.reflect(request));
    return sendEventStream(req, reply, async (emit, signal) => {
      const result = await engine.service.reflect(request, { onDelta: (text) => emit('delta', { text }), signal });
      emit('done', reflectAnswer(result));
    });
  };

  app.post(
    '/v1/:tenant/banks/:bank/reflect',
    {
      schema: {
        tags: ['reflect'],
        operationId: 'reflectBank',
        summary: 'Answer a question from memory, with citations',
        description: STREAMING,
        params: BankParams,
        body: ReflectBody,
        ...answers(reflectSuccess, REFLECT_PROBLEMS),
      },
      ...plainJsonAnswers,
    },
    async (req, reply) => answer(req, reply, reflectRequest(req.params.tenant, req.params.bank, req.body)),
  );

  app.post(
    '/v1/reflect',
    {
      schema: {
        tags: ['operations'],
        operationId: 'reflect',
        summary: 'Answer a question from a bank, with citations',
        description: STREAMING,
        body: ReflectWithBankBody,
        ...answers(reflectSuccess, REFLECT_PROBLEMS),
      },
      ...plainJsonAnswers,
    },
    async (req, reply) => answer(req, reply, reflectRequest('default', req.body.bank_id, req.body)),
  );

  app.get(
    '/v1/:tenant/operations/:id',
    {
      schema: {
        tags: ['operations'],
        operationId: 'getOperation',
        summary: 'Status of an async retain or extraction',
        params: OperationParams,
        ...answers({ 200: OperationAnswer }, ['operation_not_found']),
      },
      ...plainJsonAnswers,
    },
    async (req) => operationAnswer(await engine.service.operation(req.params.tenant, req.params.id)),
  );
}
