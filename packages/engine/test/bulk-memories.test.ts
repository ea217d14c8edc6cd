// Bulk update and bulk get (POST .../memories/update and .../memories/get): one transaction, versions in the history
// like a PATCH, recall sees the change at once; a get answers in the order asked and marks ids without a memory; bad
// bodies answer 400 and change nothing. With encryption at rest the metadata set is sealed again.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';

type Problem = { status: number; errors?: Array<{ pointer: string; detail: string }> };
type Memory = { id: string; text: string; metadata: Record<string, string>; tags: string[]; state: string };
type GetAnswer = { items: Array<{ id: string; found: boolean; memory: Memory | null }> };

const bankPath = (bank: string) => `/v1/default/banks/${bank}`;
let engine: TestEngine;
let sealed: TestEngine;

async function retain(on: TestEngine, bank: string): Promise<string[]> {
  const items = [
    { content: 'Ann likes green tea.', metadata: { session: 's1' }, tags: ['drinks'] },
    { content: 'Ann likes black coffee.', metadata: { session: 's1' } },
    { content: 'Ann likes oolong tea.', metadata: { session: 's2' } },
  ];
  const answer = await call<{ memory_ids: string[] }>(on.url, 'POST', `${bankPath(bank)}/memories`, { items });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.memory_ids;
}

async function getMany(on: TestEngine, bank: string, ids: string[]): Promise<GetAnswer['items']> {
  const answer = await call<GetAnswer>(on.url, 'POST', `${bankPath(bank)}/memories/get`, { ids });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.items;
}

async function recallIds(on: TestEngine, bank: string, body: Record<string, unknown>): Promise<string[]> {
  const answer = await call<{ results: Array<{ id: string }> }>(on.url, 'POST', `${bankPath(bank)}/memories/recall`, {
    query: 'What does Ann like?',
    ...body,
  });
  return answer.body.results.map((r) => r.id);
}

before(async () => {
  engine = await startTestEngine();
  sealed = await startTestEngine({ MNEMOS_API_ENCRYPTION_MASTER_KEY: Buffer.alloc(32, 7).toString('base64') });
});
after(async () => {
  await engine?.dispose();
  await sealed?.dispose();
});

describe('bulk get', () => {
  it('answers the memories in the order asked, marking ids without a memory', async () => {
    const [a, b, c] = await retain(engine, 'get-order');
    const missing = randomUUID();
    const items = await getMany(engine, 'get-order', [c!, missing, a!, c!]);
    assert.deepEqual(
      items.map((i) => [i.id, i.found]),
      [
        [c, true],
        [missing, false],
        [a, true],
        [c, true],
      ],
    );
    assert.equal(items[0]!.memory?.text, 'Ann likes oolong tea.');
    assert.equal(items[1]!.memory, null);
    const elsewhere = await call<GetAnswer>(engine.url, 'POST', `${bankPath('get-order')}/memories/get`, {
      ids: [b],
      space: 'other',
    });
    assert.equal(elsewhere.body.items[0]!.found, false, 'a space given bounds the get to it');
    const otherBank = await getMany(engine, 'get-order-other', [a!]);
    assert.equal(otherBank[0]!.found, false, 'another bank does not see the memory');
  });

  it('refuses no ids, too many ids and ids that are not UUIDs with 400', async () => {
    for (const [body, pointer] of [
      [{}, '/ids'],
      [{ ids: [] }, '/ids'],
      [{ ids: ['not-a-uuid'] }, '/ids/0'],
      [{ ids: Array.from({ length: 1001 }, () => randomUUID()) }, '/ids'],
    ] as const) {
      const answer = await call<Problem>(engine.url, 'POST', `${bankPath('get-order')}/memories/get`, body);
      assert.equal(answer.status, 400, JSON.stringify(body).slice(0, 80));
      assert.equal(answer.body.errors?.[0]?.pointer, pointer);
    }
  });
});

describe('bulk update', () => {
  it('sets metadata and tags on the memories a filter passes, with a version each, and recall filters see it', async () => {
    const bank = 'update-filter';
    const [a, b, c] = await retain(engine, bank);
    assert.equal((await recallIds(engine, bank, {})).length, 3, 'the bank is held in memory before the update');
    const answer = await call<{ updated_count: number }>(engine.url, 'POST', `${bankPath(bank)}/memories/update`, {
      filter: { 'metadata.session': 's1' },
      set: { metadata: { session: 's1', reviewed: 'yes' }, tags: ['checked'] },
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.updated_count, 2);
    const items = await getMany(engine, bank, [a!, b!, c!]);
    assert.deepEqual(
      items.map((i) => i.memory?.tags),
      [['checked'], ['checked'], []],
    );
    assert.equal(items[0]!.memory?.metadata['reviewed'], 'yes');
    assert.equal(items[2]!.memory?.metadata['reviewed'], undefined);
    const reviewed = await recallIds(engine, bank, { filter: { 'metadata.reviewed': 'yes' } });
    assert.deepEqual(new Set(reviewed), new Set([a, b]), 'the in-memory copy reloads the change');
    const history = await call<{ items: Array<{ change: string }> }>(
      engine.url,
      'GET',
      `${bankPath(bank)}/memories/${a}/history`,
    );
    assert.deepEqual(
      history.body.items.map((v) => v.change),
      ['create', 'update'],
    );
  });

  it('invalidates the memories ids name; recall leaves them out and unknown ids change nothing', async () => {
    const bank = 'update-ids';
    const [a, b, c] = await retain(engine, bank);
    const answer = await call<{ updated_count: number }>(engine.url, 'POST', `${bankPath(bank)}/memories/update`, {
      ids: [a, c, randomUUID()],
      set: { state: 'invalidated' },
    });
    assert.equal(answer.body.updated_count, 2);
    assert.deepEqual(await recallIds(engine, bank, {}), [b]);
    const history = await call<{ items: Array<{ change: string }> }>(
      engine.url,
      'GET',
      `${bankPath(bank)}/memories/${c}/history`,
    );
    assert.equal(history.body.items.at(-1)?.change, 'invalidate');
  });

  it('sets expires_at on the memories selected: a date gives them one, a past one forgets them, null keeps them', async () => {
    const bank = 'update-expiry';
    const [a, b, c] = await retain(engine, bank);
    const update = (body: Record<string, unknown>) =>
      call<{ updated_count: number }>(engine.url, 'POST', `${bankPath(bank)}/memories/update`, body);
    const later = await update({ ids: [a, b], set: { expires_at: '2999-01-01T00:00:00Z' } });
    assert.equal(later.body.updated_count, 2, JSON.stringify(later.body));
    const dated = await getMany(engine, bank, [a!, b!, c!]);
    assert.deepEqual(
      dated.map((i) => (i.memory as { expires_at: string | null } | null)?.expires_at ?? null),
      ['2999-01-01T00:00:00.000Z', '2999-01-01T00:00:00.000Z', null],
    );
    assert.equal((await update({ ids: [b], set: { expires_at: null } })).body.updated_count, 1);
    const kept = await getMany(engine, bank, [b!]);
    assert.equal((kept[0]!.memory as { expires_at: string | null } | null)?.expires_at, null, 'null keeps it');
    assert.equal(
      (await update({ filter: { 'metadata.session': 's2' }, set: { expires_at: '2000-01-01' } })).status,
      200,
    );
    assert.deepEqual(new Set(await recallIds(engine, bank, {})), new Set([a, b]), 'a past expiry forgets it at once');
    assert.equal((await getMany(engine, bank, [c!]))[0]!.found, false);
  });

  it('refuses bad bodies with 400 and changes nothing', async () => {
    const bank = 'update-bad';
    const [a] = await retain(engine, bank);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ set: { tags: ['x'] } }, '/filter'],
      [{ ids: [a], filter: { type: 'raw' }, set: { tags: ['x'] } }, '/ids'],
      [{ ids: [a] }, '/set'],
      [{ ids: [a], set: {} }, '/set'],
      [{ ids: [a], set: { state: 'gone' } }, '/set/state'],
      [{ filter: { tags: { gt: 1 } }, set: { tags: ['x'] } }, '/filter/tags'],
      [{ ids: [a], set: { metadata: { k: 'v'.repeat(10_001) } } }, '/set/metadata/k'],
      [{ ids: ['nope'], set: { tags: ['x'] } }, '/ids/0'],
      [{ ids: [a], set: { expires_at: 'next week' } }, '/set/expires_at'],
    ];
    for (const [body, pointer] of cases) {
      const answer = await call<Problem>(engine.url, 'POST', `${bankPath(bank)}/memories/update`, body);
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.ok(
        answer.body.errors?.[0]?.pointer.startsWith(pointer),
        `${JSON.stringify(body)}: ${answer.body.errors?.[0]?.pointer}`,
      );
    }
    const [memory] = await getMany(engine, bank, [a!]);
    assert.deepEqual(memory!.memory?.tags, ['drinks']);
  });

  it('under encryption at rest seals the new metadata and refuses a filter on metadata', async () => {
    const bank = 'update-sealed';
    const [a, b] = await retain(sealed, bank);
    const answer = await call<{ updated_count: number }>(sealed.url, 'POST', `${bankPath(bank)}/memories/update`, {
      ids: [a, b],
      set: { metadata: { reviewed: 'yes' } },
    });
    assert.equal(answer.body.updated_count, 2);
    const items = await getMany(sealed, bank, [a!, b!]);
    assert.deepEqual(
      items.map((i) => [i.memory?.text, i.memory?.metadata]),
      [
        ['Ann likes green tea.', { reviewed: 'yes' }],
        ['Ann likes black coffee.', { reviewed: 'yes' }],
      ],
    );
    const refused = await call<Problem>(sealed.url, 'POST', `${bankPath(bank)}/memories/update`, {
      filter: { 'metadata.session': 's1' },
      set: { tags: ['x'] },
    });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.errors?.[0]?.pointer, '/filter');
  });
});
