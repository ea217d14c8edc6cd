import type { Engine } from '../../engine.js';
import { entityAnswer, entityPageAnswer } from '../../wire/entity-answers.js';
import {
  EntityAnswer,
  EntityListAnswer,
  EntityListQuery,
  EntityParams,
  EntityQuery,
} from '../../wire/entity-schemas.js';
import { checkText } from '../../wire/input.js';
import { BankParams } from '../../wire/schemas.js';
import type { TypedApp } from '../typed-app.js';
import { answers } from '../responses.js';

const tags = ['entities'];

/** A bank's entities: the names its memories carry (extracted by the LLM, or by the cheap extractor without one). */
export function registerEntityRoutes(app: TypedApp, engine: Engine): void {
  app.get(
    '/v1/:tenant/banks/:bank/entities',
    {
      schema: {
        tags,
        operationId: 'listEntities',
        summary: "List a bank's entities (paged by cursor; filter by name prefix)",
        params: BankParams,
        querystring: EntityListQuery,
        ...answers({ 200: EntityListAnswer }),
      },
    },
    async (req) =>
      entityPageAnswer(
        await engine.service.listEntities({
          tenant: req.params.tenant,
          bankId: req.params.bank,
          space: req.query.space,
          prefix: req.query.prefix === undefined ? undefined : checkText(req.query.prefix, '/query/prefix'),
          limit: req.query.limit ?? 100,
          cursor: req.query.cursor,
        }),
      ),
  );

  app.get(
    '/v1/:tenant/banks/:bank/entities/:name',
    {
      schema: {
        tags,
        operationId: 'getEntity',
        summary: 'An entity: its current facts and the timeline of their changes',
        params: EntityParams,
        querystring: EntityQuery,
        ...answers({ 200: EntityAnswer }, ['entity_not_found']),
      },
    },
    async (req) =>
      entityAnswer(
        await engine.service.entity({
          tenant: req.params.tenant,
          bankId: req.params.bank,
          space: req.query.space,
          name: checkText(req.params.name, '/name'),
          limit: req.query.limit ?? 100,
        }),
      ),
  );
}
