import { Type } from '@sinclair/typebox';
import type { Engine } from '../../engine.js';
import { bankAnswer, bankPageAnswer, bankStatsAnswer, deleteAnswer } from '../../wire/answers.js';
import { bankChanges } from '../../wire/input.js';
import {
  BankAnswer,
  BankBody,
  BankListAnswer,
  BankListQuery,
  BankParams,
  DeleteAnswer,
  TenantParams,
} from '../../wire/schemas.js';
import type { TypedApp } from '../typed-app.js';
import { answers } from '../responses.js';

const tags = ['banks'];

export function registerBankRoutes(app: TypedApp, engine: Engine): void {
  const service = engine.service;
  app.get(
    '/v1/:tenant/banks',
    {
      schema: {
        tags,
        operationId: 'listBanks',
        summary: 'List banks, most recently written first',
        params: TenantParams,
        querystring: BankListQuery,
        ...answers({ 200: BankListAnswer }),
      },
    },
    async (req) => {
      const { q, limit = 100, offset = 0, cursor } = req.query;
      return bankPageAnswer(await service.listBanks(req.params.tenant, q, { limit, offset, cursor }));
    },
  );

  app.put(
    '/v1/:tenant/banks/:bank',
    {
      schema: {
        tags,
        operationId: 'putBank',
        summary: 'Create or update a bank profile',
        params: BankParams,
        body: BankBody,
        ...answers({ 200: BankAnswer }),
      },
    },
    async (req) =>
      bankAnswer(
        await service.putBank(
          req.params.tenant,
          req.params.bank,
          bankChanges((req.body as typeof req.body | undefined) ?? {}),
        ),
      ),
  );

  const getProfile = async (req: { params: { tenant: string; bank: string } }) =>
    bankAnswer(await service.getBank(req.params.tenant, req.params.bank));
  const profile = { tags, params: BankParams, ...answers({ 200: BankAnswer }, ['bank_not_found']) };
  app.get(
    '/v1/:tenant/banks/:bank',
    {
      schema: { ...profile, operationId: 'getBank', summary: 'Get a bank profile' },
    },
    getProfile,
  );
  app.get(
    '/v1/:tenant/banks/:bank/profile',
    {
      schema: { ...profile, operationId: 'getBankProfile', summary: 'Get a bank profile (Hindsight path)' },
    },
    getProfile,
  );

  app.patch(
    '/v1/:tenant/banks/:bank',
    {
      schema: {
        tags,
        operationId: 'patchBank',
        summary: 'Update a bank profile',
        params: BankParams,
        body: BankBody,
        ...answers({ 200: BankAnswer }, ['bank_not_found']),
      },
    },
    async (req) => {
      const { tenant, bank } = req.params;
      // A PATCH may come without a body; it then changes nothing.
      const body = (req.body as typeof req.body | undefined) ?? {};
      return bankAnswer(await service.patchBank(tenant, bank, bankChanges(body)));
    },
  );

  app.delete(
    '/v1/:tenant/banks/:bank',
    {
      schema: {
        tags,
        operationId: 'deleteBank',
        summary: 'Erase a bank and everything derived from it',
        params: BankParams,
        ...answers({ 200: DeleteAnswer }),
      },
    },
    async (req) => {
      const count = await service.deleteBank(req.params.tenant, req.params.bank);
      return deleteAnswer(count, `Bank '${req.params.bank}' and all associated data deleted`);
    },
  );

  app.get(
    '/v1/:tenant/banks/:bank/stats',
    {
      schema: {
        tags,
        operationId: 'getBankStats',
        summary: 'Bank statistics',
        params: BankParams,
        ...answers({ 200: Type.Object({}, { additionalProperties: true }) }),
      },
    },
    async (req) => bankStatsAnswer(await service.bankStats(req.params.tenant, req.params.bank)),
  );
}
