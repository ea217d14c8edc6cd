import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';

/** Async retain keeps no plaintext copy: sealed while queued under encryption, cleared once stored. */

const KEY = Buffer.alloc(32, 9).toString('base64');
let plain: TestEngine;
let sealed: TestEngine;

before(async () => {
  [plain, sealed] = await Promise.all([startTestEngine(), startTestEngine({ MNEMOS_API_ENCRYPTION_MASTER_KEY: KEY })]);
});
after(async () => {
  await Promise.all([plain?.dispose(), sealed?.dispose()]);
});

async function settle(engine: TestEngine, operationId: string): Promise<{ status: string; memory_ids?: string[] }> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
    const op = await call<{ status: string; memory_ids?: string[] }>(
      engine.url,
      'GET',
      `/v1/default/operations/${operationId}`,
    );
    if (op.body.status === 'completed' || op.body.status === 'failed') return op.body;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('operation did not finish');
}

async function payloads(engine: TestEngine): Promise<string> {
  const rows = await engine.engine.db.query<{ p: string }>('SELECT payload::text AS p FROM jobs');
  return rows.map((r) => r.p).join('\n');
}

describe('async retain', () => {
  for (const [name, engine] of [
    ['without encryption', () => plain],
    ['with encryption', () => sealed],
  ] as const) {
    it(`${name}: stores the items, then keeps no copy in the job`, async () => {
      const e = engine();
      const marker = `zanzibarmarker${name.length}`;
      const r = await call<{ async: boolean; operation_id: string }>(e.url, 'POST', '/v1/default/banks/asy/memories', {
        items: [{ content: `The ${marker} crate is in the attic.` }],
        async: true,
      });
      assert.equal(r.status, 200);
      assert.equal(r.body.async, true);
      if (name === 'with encryption') assert.ok(!(await payloads(e)).includes(marker), 'queued content is sealed');
      const op = await settle(e, r.body.operation_id);
      assert.equal(op.status, 'completed');
      assert.ok(!(await payloads(e)).includes(marker), 'no copy left in the job');
      const found = await call<{ results: Array<{ text: string }> }>(
        e.url,
        'POST',
        '/v1/default/banks/asy/memories/recall',
        { query: `${marker} crate` },
      );
      assert.equal(found.body.results[0]?.text, `The ${marker} crate is in the attic.`);
    });
  }
});
