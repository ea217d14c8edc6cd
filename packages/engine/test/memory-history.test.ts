import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEngine, type RunningEngine } from '../src/index.js';
import { call, sharedLocalModel, startTestEngine, tempHome, testEnv, type TestEngine } from './helpers/engine.js';
import { createScratchDatabase, type ScratchDatabase } from './helpers/postgres-server.js';

/**
 * Every change to a memory appends a version to its history (create, update, invalidate, restore, supersede, expire,
 * delete), oldest first; a bank's `history: "off"` appends none; a delete wipes the text of every earlier version and
 * leaves a tombstone (in the database too); under encryption at rest the history's bodies are ciphertext.
 */

interface Version {
  version: number;
  change: string;
  text: string | null;
  metadata: Record<string, string> | null;
  state: string;
  valid_from: string;
  valid_to: string | null;
  superseded_by: string | null;
  changed_at: string;
  operation_id?: string;
}

let engine: TestEngine;
let url: string;

const bankPath = (bank: string) => `/v1/default/banks/${bank}`;

async function retainOne(base: string, bank: string, body: Record<string, unknown>): Promise<string> {
  const r = await call<{ memory_ids: string[] }>(base, 'POST', `${bankPath(bank)}/memories`, body);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.memory_ids[0]!;
}

async function history(base: string, bank: string, id: string): Promise<Version[]> {
  const r = await call<{ items: Version[] }>(base, 'GET', `${bankPath(bank)}/memories/${id}/history`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.items;
}

async function patch(base: string, bank: string, id: string, body: Record<string, unknown>) {
  const r = await call(base, 'PATCH', `${bankPath(bank)}/memories/${id}`, body);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

/** Runs every change kind on one memory of `bank` and checks the versions it leaves. */
async function everyChange(base: string, bank: string): Promise<string> {
  const id = await retainOne(base, bank, {
    content: 'Alice lives in Lisbon',
    timestamp: '2023-03-01T00:00:00Z',
    metadata: { source: 'chat' },
  });
  await patch(base, bank, id, { text: 'Alice lives in Lisbon, Portugal' });
  await patch(base, bank, id, { metadata: { source: 'profile' } });
  await patch(base, bank, id, { state: 'invalidated' });
  await patch(base, bank, id, { state: 'valid' });
  const successor = await retainOne(base, bank, {
    content: 'Alice moved to Berlin',
    timestamp: '2024-06-01T00:00:00Z',
    supersedes: [id],
  });
  await patch(base, bank, id, { valid_to: null });
  await patch(base, bank, id, { valid_to: '2024-07-01T00:00:00Z' });
  const versions = await history(base, bank, id);
  assert.deepEqual(
    versions.map((v) => [v.version, v.change]),
    [
      [1, 'create'],
      [2, 'update'],
      [3, 'update'],
      [4, 'invalidate'],
      [5, 'restore'],
      [6, 'supersede'],
      [7, 'restore'],
      [8, 'expire'],
    ],
  );
  const [created, edited, retagged, invalidated, , superseded, , expired] = versions;
  assert.equal(created!.text, 'Alice lives in Lisbon');
  assert.deepEqual(created!.metadata, { source: 'chat' });
  assert.equal(created!.valid_from, '2023-03-01T00:00:00.000Z', 'valid_from defaults to the timestamp');
  assert.equal(edited!.text, 'Alice lives in Lisbon, Portugal');
  assert.deepEqual(retagged!.metadata, { source: 'profile' });
  assert.equal(invalidated!.state, 'invalidated');
  assert.equal(superseded!.superseded_by, successor);
  assert.equal(superseded!.valid_to, '2024-06-01T00:00:00.000Z', "closed at the successor's valid_from");
  assert.equal(expired!.valid_to, '2024-07-01T00:00:00.000Z');
  assert.equal(expired!.superseded_by, null, 'reopening it left no successor');
  for (let i = 1; i < versions.length; i++) {
    assert.ok(versions[i]!.changed_at >= versions[i - 1]!.changed_at, 'oldest first');
  }
  const [first] = await history(base, bank, successor);
  assert.equal(first!.change, 'create');
  return id;
}

before(async () => {
  engine = await startTestEngine();
  url = engine.url;
});
after(async () => {
  await engine?.dispose();
});

describe('memory history on the embedded database', () => {
  it('appends a version for each change kind, oldest first', async () => {
    await everyChange(url, 'history-kinds');
  });

  it('deleting leaves a tombstone without text and wipes the text of every earlier version, in the rows too', async () => {
    const bank = 'history-forget';
    const id = await retainOne(url, bank, { content: 'My passport number is X1234567', metadata: { k: 'secret' } });
    await patch(url, bank, id, { text: 'My passport number is Y7654321' });
    const gone = await call(url, 'DELETE', `${bankPath(bank)}/memories/${id}`);
    assert.equal(gone.status, 200);
    const versions = await history(url, bank, id);
    assert.deepEqual(
      versions.map((v) => [v.change, v.text, v.metadata]),
      [
        ['create', null, null],
        ['update', null, null],
        ['delete', null, null],
      ],
    );
    const rows = await engine.engine.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM memory_history WHERE memory_id = $1
         AND (text IS NOT NULL OR context IS NOT NULL OR metadata IS NOT NULL OR body_enc IS NOT NULL
           OR cardinality(entities) > 0)`,
      [id],
    );
    assert.equal(rows[0]!.n, 0, 'no stored version holds any of its text');
    const anywhere = await engine.engine.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM memory_history WHERE text LIKE '%passport%' OR metadata::text LIKE '%secret%'`,
    );
    assert.equal(anywhere[0]!.n, 0);
  });

  it('a clear forgets like a delete', async () => {
    const bank = 'history-clear';
    const id = await retainOne(url, bank, { content: 'Bob prefers window seats' });
    assert.equal((await call(url, 'DELETE', `${bankPath(bank)}/memories`)).status, 200);
    const versions = await history(url, bank, id);
    assert.deepEqual(
      versions.map((v) => [v.change, v.text]),
      [
        ['create', null],
        ['delete', null],
      ],
    );
  });

  it('history off appends no version; turning it on again records the next change', async () => {
    const bank = 'history-off';
    const put = await call<{ history: string }>(url, 'PUT', bankPath(bank), { history: 'off' });
    assert.equal(put.status, 200);
    assert.equal(put.body.history, 'off');
    const id = await retainOne(url, bank, { content: 'Carol works at Initech' });
    await patch(url, bank, id, { text: 'Carol works at Initrode' });
    assert.deepEqual(await history(url, bank, id), []);
    const on = await call<{ history: string }>(url, 'PATCH', bankPath(bank), { history: 'on' });
    assert.equal(on.body.history, 'on');
    await patch(url, bank, id, { state: 'invalidated' });
    assert.deepEqual(
      (await history(url, bank, id)).map((v) => [v.version, v.change]),
      [[1, 'invalidate']],
    );
    assert.equal((await call<{ history: string }>(url, 'GET', bankPath('history-kinds'))).body.history, 'on');
  });

  it('an async retain names its operation in the version', async () => {
    const bank = 'history-async';
    const r = await call<{ operation_id: string }>(url, 'POST', `${bankPath(bank)}/memories`, {
      content: 'Dave has a dog named Rex',
      async: true,
    });
    let ids: string[] = [];
    for (let i = 0; i < 200 && ids.length === 0; i++) {
      const op = await call<{ status: string; memory_ids: string[] }>(
        url,
        'GET',
        `/v1/default/operations/${r.body.operation_id}`,
      );
      if (op.body.status === 'completed') ids = op.body.memory_ids;
      else await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const [created] = await history(url, bank, ids[0]!);
    assert.equal(created!.operation_id, r.body.operation_id);
  });

  it('an unknown memory is a 404; a malformed id or setting is a 400 that changes nothing', async () => {
    const unknown = await call(url, 'GET', `${bankPath('history-kinds')}/memories/${crypto.randomUUID()}/history`);
    assert.equal(unknown.status, 404);
    const malformed = await call(url, 'GET', `${bankPath('history-kinds')}/memories/not-a-uuid/history`);
    assert.equal(malformed.status, 400);
    assert.equal(malformed.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    const setting = await call<{ errors: Array<{ pointer: string }> }>(url, 'PATCH', bankPath('history-kinds'), {
      history: 'sometimes',
    });
    assert.equal(setting.status, 400);
    assert.equal(setting.body.errors[0]!.pointer, '/history');
    assert.equal((await call<{ history: string }>(url, 'GET', bankPath('history-kinds'))).body.history, 'on');
  });
});

describe('memory history under encryption at rest', () => {
  let home: ReturnType<typeof tempHome>;
  let enc: RunningEngine;
  before(async () => {
    home = tempHome();
    enc = await startEngine({
      env: testEnv(home.path, { MNEMOS_API_ENCRYPTION_MASTER_KEY: Buffer.alloc(32, 7).toString('base64') }),
      engine: { model: await sharedLocalModel() },
    });
  });
  after(async () => {
    await enc?.close();
    home?.remove();
  });

  it('stores every version body as ciphertext and answers it in plaintext', async () => {
    const id = await retainOne(enc.url, 'enc-history', {
      content: 'Erin banks with Zorbank',
      metadata: { m: 'Zorbank' },
    });
    await patch(enc.url, 'enc-history', id, { text: 'Erin banks with Quuxbank' });
    const versions = await history(enc.url, 'enc-history', id);
    assert.deepEqual(
      versions.map((v) => [v.change, v.text, v.metadata]),
      [
        ['create', 'Erin banks with Zorbank', { m: 'Zorbank' }],
        ['update', 'Erin banks with Quuxbank', { m: 'Zorbank' }],
      ],
    );
    const rows = await enc.engine.db.query<{ text: string | null; metadata: unknown; body_enc: Uint8Array | null }>(
      'SELECT text, metadata, body_enc FROM memory_history WHERE memory_id = $1',
      [id],
    );
    assert.equal(rows.length, 2);
    for (const row of rows) {
      assert.equal(row.text, null);
      assert.deepEqual(row.metadata, {});
      assert.ok(row.body_enc !== null && !Buffer.from(row.body_enc).includes('Zorbank'));
    }
  });
});

describe('memory history on a PostgreSQL server', () => {
  let scratch: ScratchDatabase;
  let pg: TestEngine;
  before(async () => {
    scratch = await createScratchDatabase('mnemos_history');
    pg = await startTestEngine({ MNEMOS_API_DATABASE_URL: scratch.url });
  });
  after(async () => {
    await pg?.dispose();
    await scratch?.drop();
  });

  it('appends every change kind, and a delete forgets', async () => {
    const id = await everyChange(pg.url, 'pg-history');
    assert.equal((await call(pg.url, 'DELETE', `${bankPath('pg-history')}/memories/${id}`)).status, 200);
    const versions = await history(pg.url, 'pg-history', id);
    assert.equal(versions.at(-1)!.change, 'delete');
    assert.ok(versions.every((v) => v.text === null));
    const [left] = await scratch.admin<{ n: number }>(
      'SELECT count(*)::int AS n FROM memory_history WHERE memory_id = $1 AND (text IS NOT NULL OR body_enc IS NOT NULL)',
      [id],
    );
    assert.equal(left!.n, 0);
  });
});
