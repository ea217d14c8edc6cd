import { Type } from '@sinclair/typebox';
import { deleteBank, getBank, listBanks, patchBank, putBank, type BankChanges } from '../../banks/store.js';
import type { Engine } from '../../engine.js';
import type { TypedApp } from '../app.js';
import { checkText } from '../normalize.js';
import { problem } from '@mnemos/problems';
import {
  BankAnswer, BankBody, BankListAnswer, BankListQuery, BankParams, DeleteAnswer, TenantParams, type BankBodyT,
} from '../schemas.js';

const problemRef = { $ref: 'Problem#' };
const errors = { 400: problemRef, 401: problemRef, 404: problemRef };

function changes(body: BankBodyT): BankChanges {
  const mission = body.mission ?? body.reflect_mission ?? body.background ?? undefined;
  for (const [field, value] of [['name', body.name], ['mission', mission]] as const) {
    if (typeof value === 'string') checkText(value, `/${field}`);
  }
  const d = body.disposition ?? undefined;
  return {
    name: body.name ?? undefined,
    mission,
    disposition: d
      ? {
          ...(d.skepticism !== undefined ? { skepticism: d.skepticism } : {}),
          ...(d.literalism !== undefined ? { literalism: d.literalism } : {}),
          ...(d.empathy !== undefined ? { empathy: d.empathy } : {}),
        }
      : undefined,
    space: body.space ?? undefined,
  };
}

export function registerBankRoutes(app: TypedApp, engine: Engine): void {
  app.get('/v1/:tenant/banks', {
    schema: { tags: ['banks'], operationId: 'listBanks', summary: 'List banks, most recently written first', params: TenantParams, querystring: BankListQuery, response: { 200: BankListAnswer, ...errors } },
  }, async (req) => {
    const limit = req.query.limit ?? 100;
    const offset = req.query.offset ?? 0;
    const { banks, total } = await listBanks(engine.db, req.params.tenant, req.query.q, limit, offset);
    return { banks, total, limit, offset };
  });

  app.put('/v1/:tenant/banks/:bank', {
    schema: { tags: ['banks'], operationId: 'putBank', summary: 'Create or update a bank profile', params: BankParams, body: BankBody, response: { 200: BankAnswer, ...errors } },
  }, async (req) => putBank(engine.db, req.params.tenant, req.params.bank, changes(req.body ?? {})));

  const getProfile = async (req: { params: { tenant: string; bank: string } }) => {
    const bank = await getBank(engine.db, req.params.tenant, req.params.bank);
    if (!bank) throw problem('bank_not_found', 'notYetWritten', { bankId: req.params.bank });
    return bank;
  };
  app.get('/v1/:tenant/banks/:bank', {
    schema: { tags: ['banks'], operationId: 'getBank', summary: 'Get a bank profile', params: BankParams, response: { 200: BankAnswer, ...errors } },
  }, getProfile);
  app.get('/v1/:tenant/banks/:bank/profile', {
    schema: { tags: ['banks'], operationId: 'getBankProfile', summary: 'Get a bank profile (Hindsight path)', params: BankParams, response: { 200: BankAnswer, ...errors } },
  }, getProfile);

  app.patch('/v1/:tenant/banks/:bank', {
    schema: { tags: ['banks'], operationId: 'patchBank', summary: 'Update a bank profile', params: BankParams, body: BankBody, response: { 200: BankAnswer, ...errors } },
  }, async (req) => {
    const bank = await patchBank(engine.db, req.params.tenant, req.params.bank, changes(req.body ?? {}));
    if (!bank) throw problem('bank_not_found', 'notCreated', { bankId: req.params.bank });
    return bank;
  });

  app.delete('/v1/:tenant/banks/:bank', {
    schema: { tags: ['banks'], operationId: 'deleteBank', summary: 'Erase a bank and everything derived from it', params: BankParams, response: { 200: DeleteAnswer, ...errors } },
  }, async (req) => {
    const count = await engine.db.transaction((tx) => deleteBank(tx, req.params.tenant, req.params.bank));
    return { success: true, deleted_count: count, message: `Bank '${req.params.bank}' and all associated data deleted` };
  });

  app.get('/v1/:tenant/banks/:bank/stats', {
    schema: { tags: ['banks'], operationId: 'getBankStats', summary: 'Bank statistics', params: BankParams, response: { 200: Type.Object({}, { additionalProperties: true }), ...errors } },
  }, async (req) => {
    const rows = await engine.db.query<{ type: string; n: string | number }>(
      'SELECT type, count(*) AS n FROM memories WHERE tenant = $1 AND bank_id = $2 GROUP BY type',
      [req.params.tenant, req.params.bank],
    );
    const byType = Object.fromEntries(rows.map((r) => [r.type, Number(r.n)]));
    const bank = await getBank(engine.db, req.params.tenant, req.params.bank);
    return {
      bank_id: req.params.bank,
      total_nodes: Object.values(byType).reduce((a, b) => a + b, 0),
      total_memories: Object.values(byType).reduce((a, b) => a + b, 0),
      nodes_by_fact_type: byType,
      last_memory_write_at: bank?.last_write_at ?? null,
      usage: bank?.usage ?? { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    };
  });
}
