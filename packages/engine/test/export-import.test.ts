// Export and import: GET .../export streams NDJSON (retained memories, then facts), POST .../import reads it back on
// another engine keeping ids, dates and facts' sources, re-embedded and sealed under the target bank's key; duplicates
// are skipped, bad lines reported by number without stopping; mem0's get_all JSON imports too.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';
import { createScratchDatabase, type ScratchDatabase } from './helpers/postgres-server.js';

type ImportAnswer = { imported: number; skipped: number; failed: Array<{ line: number; problem: string }> };
type Line = Record<string, unknown> & { id: string; text: string; source_id: string | null };

const bankPath = (bank: string) => `/v1/default/banks/${bank}`;
let plain: TestEngine;
let sealed: TestEngine;
let scratch: ScratchDatabase;
/** An encrypted engine on the real PostgreSQL server (its own database), with a key of its own. */
let external: TestEngine;

async function exportText(on: TestEngine, bank: string, query = ''): Promise<{ type: string | null; text: string }> {
  const res = await fetch(`${on.url}${bankPath(bank)}/export${query}`);
  assert.equal(res.status, 200);
  return { type: res.headers.get('content-type'), text: await res.text() };
}

const linesOf = (text: string): Line[] =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Line);

async function importText(on: TestEngine, bank: string, body: string, query = ''): Promise<ImportAnswer> {
  const answer = await call<ImportAnswer>(on.url, 'POST', `${bankPath(bank)}/import${query}`, body, {
    'content-type': 'application/x-ndjson',
  });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body;
}

async function recallIds(on: TestEngine, bank: string, query: string): Promise<string[]> {
  const answer = await call<{ results: Array<{ id: string }> }>(on.url, 'POST', `${bankPath(bank)}/memories/recall`, {
    query,
  });
  return answer.body.results.map((r) => r.id);
}

before(async () => {
  scratch = await createScratchDatabase('mnemos_export_import');
  plain = await startTestEngine();
  sealed = await startTestEngine({
    MNEMOS_API_ENCRYPTION_MASTER_KEY: Buffer.alloc(32, 5).toString('base64'),
    MNEMOS_API_MAX_IMPORT_BYTES: '65536',
  });
  external = await startTestEngine({
    MNEMOS_API_DATABASE_URL: scratch.url,
    MNEMOS_API_ENCRYPTION_MASTER_KEY: Buffer.alloc(32, 9).toString('base64'),
  });
});
after(async () => {
  await plain?.dispose();
  await sealed?.dispose();
  await external?.dispose();
  await scratch?.drop();
});

/**
 * Retains `items` and one fact derived from the first on `from`, moves the bank to `to` through export and import,
 * and checks that `to` exports the same lines and answers each query with the same ids in the same order.
 */
async function roundTrip(from: TestEngine, to: TestEngine, bank: string, items: unknown[], queries: string[]) {
  const retained = await call<{ memory_ids: string[] }>(from.url, 'POST', `${bankPath(bank)}/memories`, { items });
  assert.equal(retained.status, 200, JSON.stringify(retained.body));
  const fact = {
    id: randomUUID(),
    text: 'A fact drawn from the first memory.',
    type: 'world',
    source_id: retained.body.memory_ids[0],
  };
  assert.equal((await importText(from, bank, JSON.stringify(fact))).imported, 1);

  const lines = linesOf((await exportText(from, bank)).text);
  assert.equal(lines.length, items.length + 1);
  assert.deepEqual(await importText(to, bank, lines.map((l) => JSON.stringify(l)).join('\n')), {
    imported: items.length + 1,
    skipped: 0,
    failed: [],
  });
  const again = linesOf((await exportText(to, bank)).text);
  assert.deepEqual(again, lines, 'ids, texts, metadata, dates, sources and places survive');
  for (const query of queries) {
    const expected = await recallIds(from, bank, query);
    assert.ok(expected.length > 0, query);
    assert.deepEqual(await recallIds(to, bank, query), expected, query);
  }
}

describe('export -> import', () => {
  it('moves a bank to an encrypted engine keeping ids, dates, facts and recall, and skips it the second time', async () => {
    const bank = 'travel';
    const items = [
      {
        content: 'Maya flew to Lisbon in May.',
        metadata: { trip: 'lisbon', nights: 4, legs: [{ from: 'OPO', to: 'LIS' }] },
        tags: ['trip'],
        timestamp: '2024-05-02',
      },
      { content: 'Maya booked a hotel near the river.', metadata: { trip: 'lisbon' } },
      { content: 'Tom prefers trains over planes.', context: 'chat' },
    ];
    const retained = await call<{ memory_ids: string[] }>(plain.url, 'POST', `${bankPath(bank)}/memories`, { items });
    const [lisbon] = retained.body.memory_ids;
    await call(plain.url, 'POST', `${bankPath(bank)}/memories`, { content: 'A note in another space.', space: 'work' });
    // A fact derived from the first memory, as extraction would store it (imports carry facts with their source).
    const fact = { id: randomUUID(), text: 'Maya visited Lisbon.', type: 'world', source_id: lisbon };
    assert.equal((await importText(plain, bank, JSON.stringify(fact))).imported, 1);

    const exported = await exportText(plain, bank);
    assert.equal(exported.type, 'application/x-ndjson');
    const lines = linesOf(exported.text);
    assert.equal(lines.length, 5);
    assert.equal(lines.at(-1)?.id, fact.id, 'facts come after every retained memory, so their sources come first');

    const answer = await importText(sealed, bank, exported.text);
    assert.deepEqual(answer, { imported: 5, skipped: 0, failed: [] });
    const again = linesOf((await exportText(sealed, bank)).text);
    assert.deepEqual(again, lines, 'ids, texts, metadata, dates, sources and places survive');

    for (const query of ['Where did Maya fly?', 'How does Tom like to travel?']) {
      const before = await recallIds(plain, bank, query);
      const after = await recallIds(sealed, bank, query);
      assert.deepEqual(after, before, query);
    }
    const work = linesOf((await exportText(sealed, bank, '?space=work')).text);
    assert.deepEqual(
      work.map((l) => l.text),
      ['A note in another space.'],
    );

    assert.deepEqual(await importText(sealed, bank, exported.text), { imported: 0, skipped: 5, failed: [] });
  });

  it('moves a bank from an encrypted engine on PostgreSQL to an embedded one, and another back', async () => {
    await roundTrip(
      external,
      plain,
      'garden',
      [
        {
          content: 'Ines planted tomatoes along the south wall.',
          metadata: { bed: 'south', rows: [1, 2.5], shade: null, organic: true, note: 'tomates à l’ancienne' },
          tags: ['garden', 'spring'],
          timestamp: '2023-04-09T07:15:30.250+02:00',
        },
        { content: 'Ines waters the garden every evening.', metadata: { schedule: { at: '19:00', days: 7 } } },
        { content: 'The shed key hangs behind the kitchen door.', context: 'house', timestamp: '2022-11-30' },
      ],
      ['What did Ines plant?', 'Where is the shed key?'],
    );
    await roundTrip(
      plain,
      external,
      'recipes',
      [
        {
          content: 'Omar bakes sourdough on Saturdays.',
          metadata: { levain: { hydration: 0.8, flours: ['rye', 'wheat'] }, fails: [] },
          tags: ['bread'],
          timestamp: '2021-02-28T23:59:59.999Z',
        },
        { content: 'Omar keeps his starter in the fridge.', metadata: { nested: [[{ deep: false }]] } },
        { content: 'Lena cannot eat gluten.', context: 'dinner party' },
      ],
      ['When does Omar bake bread?', 'What can Lena not eat?'],
    );
  });

  it('reports bad lines by number and imports the rest', async () => {
    const good = { id: randomUUID(), text: 'Paolo plays the cello.' };
    const body = [
      'not json',
      JSON.stringify(good),
      '',
      JSON.stringify({ text: 'A typed memory.', type: 'rumour' }),
      JSON.stringify({ id: 'nope', text: 'x' }),
      JSON.stringify({ text: '' }),
      JSON.stringify({ text: 'Orphan fact.', type: 'world', source_id: randomUUID() }),
      JSON.stringify([1, 2]),
      JSON.stringify({ text: 'No id: a new one is given.' }),
      JSON.stringify({ text: 'A place without its call.', batch_seq: 2 }),
      JSON.stringify({ text: 'A place before the first.', batch_id: randomUUID(), batch_seq: -1 }),
    ].join('\n');
    const answer = await importText(plain, 'lines', body);
    assert.equal(answer.imported, 2);
    assert.deepEqual(
      answer.failed.map((f) => f.line),
      [1, 4, 5, 6, 8, 10, 11, 7],
    );
    assert.match(answer.failed.find((f) => f.line === 10)!.problem, /batch_id and batch_seq come together/);
    assert.match(answer.failed.find((f) => f.line === 11)!.problem, /^batch_seq must be a whole number/);
    assert.match(answer.failed.find((f) => f.line === 7)!.problem, /source memory .* is not in the bank/);
    assert.match(answer.failed.find((f) => f.line === 4)!.problem, /^type must be one of/);
    const stored = linesOf((await exportText(plain, 'lines')).text);
    assert.ok(stored.some((l) => l.id === good.id));
  });

  it('refuses a body over its own limit (413 when declared) and names the line where an undeclared one stopped', async () => {
    const line = `${JSON.stringify({ text: `Filler ${'x'.repeat(900)}` })}\n`;
    const big = line.repeat(80);
    const declared = await call<{ status: number }>(sealed.url, 'POST', `${bankPath('big')}/import`, big, {
      'content-type': 'application/x-ndjson',
    });
    assert.equal(declared.status, 413);
    const chunks = Array.from({ length: 80 }, () => new TextEncoder().encode(line));
    const res = await fetch(`${sealed.url}${bankPath('big')}/import`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body: new ReadableStream({
        pull(controller) {
          const next = chunks.shift();
          if (next === undefined) controller.close();
          else controller.enqueue(next);
        },
      }),
      duplex: 'half',
    });
    const answer = (await res.json()) as ImportAnswer;
    assert.equal(res.status, 200);
    assert.equal(answer.failed.length, 1);
    assert.match(answer.failed[0]!.problem, /MNEMOS_API_MAX_IMPORT_BYTES/);
    assert.ok(answer.failed[0]!.line > 1 && answer.failed[0]!.line <= 80);
  });
});

describe('mem0 import', () => {
  const mem0Memory = (memory: string, extra: Record<string, unknown> = {}) => ({
    id: randomUUID(),
    memory,
    hash: 'ignored',
    metadata: { source: 'chat', score: 3 },
    categories: ['travel'],
    user_id: 'alice',
    agent_id: null,
    created_at: '2024-07-01T10:00:00-07:00',
    updated_at: '2024-07-02T10:00:00-07:00',
    ...extra,
  });

  it("imports mem0's get_all document: text, scoping ids and metadata as metadata, categories as tags", async () => {
    const first = mem0Memory('Alice is vegetarian.', { expiration_date: '2099-12-31' });
    const second = mem0Memory('Alice lives in Porto.', { run_id: 'r1' });
    const document = { results: [first, second, { memory: 42 }] };
    const answer = await importText(sealed, 'from-mem0', JSON.stringify(document), '?format=mem0');
    assert.equal(answer.imported, 2);
    assert.deepEqual(
      answer.failed.map((f) => f.line),
      [3],
    );
    const [line] = linesOf((await exportText(sealed, 'from-mem0')).text).filter((l) => l.id === first.id);
    assert.equal(line?.text, 'Alice is vegetarian.');
    assert.deepEqual(line?.metadata, { source: 'chat', score: 3, user_id: 'alice' });
    assert.deepEqual(line?.tags, ['travel']);
    assert.equal(line?.expires_at, '2099-12-31T00:00:00.000Z', "mem0's expiration_date is the memory's expiry");
    assert.equal(line?.created_at, '2024-07-01T17:00:00.000Z');
    const list = await call<{ items: Array<{ id: string }> }>(
      sealed.url,
      'GET',
      `${bankPath('from-mem0')}/memories?tags=travel`,
    );
    assert.equal(list.body.items.length, 2);
  });

  it('imports mem0 memories given one a line, and a v1 list document', async () => {
    const lines = [mem0Memory('Bob plays chess.'), mem0Memory('Bob drinks tea.')].map((m) => JSON.stringify(m));
    assert.equal((await importText(plain, 'mem0-lines', lines.join('\n'))).imported, 2);
    const list = [mem0Memory('Carol runs marathons.')];
    assert.equal((await importText(plain, 'mem0-list', JSON.stringify(list), '?format=mem0')).imported, 1);
    const bad = await importText(plain, 'mem0-list', '{"results": 3}', '?format=mem0');
    assert.match(bad.failed[0]?.problem ?? '', /not a mem0 export/);
  });
});
