// @mnemos/client against a real engine (PGlite, the real embedding model, real HTTP) started by this file.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Mnemos, MnemosError, type ChatMessage, type Filter, type ReflectResult } from '@mnemos/client';
import { REPO_ROOT, startTestEngine, type TestEngine } from '../../engine/test/helpers/engine.js';
import { startFakeLlm, type FakeLlm } from '../../engine/test/helpers/fake-llm.js';

let engine: TestEngine;
let llm: FakeLlm;
let mnemos: Mnemos;

before(async () => {
  llm = await startFakeLlm();
  engine = await startTestEngine({
    MNEMOS_API_LLM_PROVIDER: 'openai',
    MNEMOS_API_LLM_BASE_URL: llm.openaiBaseUrl,
    MNEMOS_API_LLM_MODEL: 'fake',
    MNEMOS_API_LLM_API_KEY: 'x',
  });
  // Fact extraction answers nothing, so each bank holds exactly the memories the tests retain.
  llm.always = { purpose: 'extract', behaviour: { kind: 'content', content: { facts: [] } } };
  mnemos = new Mnemos({ baseUrl: engine.url });
});
after(async () => {
  await engine?.dispose();
  await llm?.stop();
});

/** Runs a script from source (tsx) and collects its output. */
function runScript(file: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', path.join(REPO_ROOT, file), ...args],
      {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let text = '';
    child.stdout.on('data', (c: Buffer) => (text += c.toString()));
    child.stderr.on('data', (c: Buffer) => (text += c.toString()));
    child.on('error', reject);
    child.on('close', (exit) => resolve({ code: exit, output: text }));
  });
}

async function rejectsWith(
  promise: Promise<unknown>,
  expected: { status: number; code: string },
): Promise<MnemosError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof MnemosError, `expected a MnemosError, got ${String(error)}`);
    assert.equal(error.status, expected.status, error.detail);
    assert.equal(error.code, expected.code, error.detail);
    assert.ok(error.detail.length > 10, 'detail is a sentence');
    return error;
  }
  assert.fail(`expected the call to fail with ${expected.code}`);
}

test('targets /v1/default without an API key and /v1/me with one', () => {
  assert.equal(new Mnemos({ baseUrl: 'http://x/' }).prefix, '/v1/default');
  assert.equal(new Mnemos({ baseUrl: 'http://x', apiKey: 'mnm_live_abc' }).prefix, '/v1/me');
  assert.equal(new Mnemos({ baseUrl: 'http://x', apiKey: 't', tenant: 'acme' }).prefix, '/v1/acme');
  assert.throws(() => new Mnemos({ baseUrl: '' }), TypeError);
});

test('retain then recall finds the memory; retain is idempotent', async () => {
  const bank = 'alice@example.com';
  const stored = await mnemos.retain(bank, 'Alice prefers green tea over coffee.');
  assert.equal(stored.success, true);
  assert.equal(stored.bank_id, bank);
  assert.equal(stored.memory_ids.length, 1);
  const again = await mnemos.retain(bank, 'Alice prefers green tea over coffee.');
  assert.deepEqual(again.memory_ids, stored.memory_ids);

  await mnemos.retain(bank, 'Alice works as a structural engineer in Lyon.', {
    tags: ['work'],
    metadata: { source: 'chat' },
  });
  const recalled = await mnemos.recall(bank, 'What does Alice like to drink?');
  assert.ok(recalled.results.length >= 1);
  assert.equal(recalled.results[0]!.id, stored.memory_ids[0]);
  assert.equal(recalled.results[0]!.text, 'Alice prefers green tea over coffee.');
  assert.equal(typeof recalled.results[0]!.score, 'number');
  assert.equal(typeof recalled.usage.tokens, 'number');

  const tagged = await mnemos.recall(bank, 'job', { tags: ['work'], tags_match: 'all_strict' });
  assert.deepEqual(
    tagged.results.map((r) => r.text),
    ['Alice works as a structural engineer in Lyon.'],
  );
  assert.deepEqual(tagged.results[0]!.metadata, { source: 'chat' });
});

test('retainBatch stores strings and items in one call', async () => {
  const out = await mnemos.retainBatch('batch-bank', [
    'Bob likes hiking in the Alps.',
    { content: 'Bob met Carol in 2019.', timestamp: '2019-06-01', tags: ['people'] },
  ]);
  assert.equal(out.items_count, 2);
  assert.equal(out.memory_ids.length, 2);
  const listed = await mnemos.listMemories('batch-bank');
  assert.equal(listed.total, 2);
  const carol = listed.items.find((m) => m.text.includes('Carol'));
  assert.ok(carol);
  assert.equal(carol.occurred_at?.slice(0, 10), '2019-06-01');
});

test('spaces partition memory: per call and as the client default', async () => {
  await mnemos.retain('shared', 'The acme launch is on Friday.', 'acme');
  await mnemos.retain('shared', 'The globex launch is on Monday.', { space: 'globex' });
  const acme = new Mnemos({ baseUrl: engine.url, space: 'acme' });
  const inAcme = await acme.recall('shared', 'When is the launch?');
  assert.deepEqual(
    inAcme.results.map((r) => r.text),
    ['The acme launch is on Friday.'],
  );
  assert.equal(inAcme.results[0]!.space, 'acme');
  const inGlobex = await acme.recall('shared', 'When is the launch?', { space: 'globex' });
  assert.deepEqual(
    inGlobex.results.map((r) => r.text),
    ['The globex launch is on Monday.'],
  );
  const inDefault = await mnemos.recall('shared', 'When is the launch?');
  assert.equal(inDefault.results.length, 0);
  assert.equal((await acme.listMemories('shared')).total, 1);
  assert.equal((await mnemos.listMemories('shared')).total, 2, 'without a space, listing covers every space');

  await mnemos.retainOrg('acme', 'Acme policy: all launches need a rollback plan.');
  const org = await acme.recall('shared', 'What do launches need?', { include_org: true });
  assert.ok(org.results.some((r) => r.org === true && r.text.includes('rollback')));
  const orgOnly = await mnemos.recallOrg('acme', 'rollback plan');
  assert.equal(orgOnly.results[0]!.text, 'Acme policy: all launches need a rollback plan.');
});

test('banks and memories: list, get, put, update, delete', async () => {
  const bank = 'profile-bank';
  const created = await mnemos.putBank(bank, { name: 'Profile', mission: 'Remember preferences.' });
  assert.equal(created.bank_id, bank);
  const updated = await mnemos.updateBank(bank, { name: 'Renamed' });
  assert.equal(updated.name, 'Renamed');
  assert.equal((await mnemos.getBank(bank)).mission, 'Remember preferences.');
  const banks = await mnemos.listBanks({ q: 'profile' });
  assert.ok(banks.banks.some((b) => b.bank_id === bank));

  const {
    memory_ids: [id],
  } = await mnemos.retain(bank, 'Dana is allergic to peanuts.');
  assert.ok(id);
  const memory = await mnemos.getMemory(bank, id);
  assert.equal(memory.text, 'Dana is allergic to peanuts.');
  const edited = await mnemos.updateMemory(bank, id, { tags: ['health'] });
  assert.deepEqual(edited.tags, ['health']);
  assert.equal((await mnemos.listMemories(bank, { q: 'peanuts', limit: 5 })).items[0]!.id, id);
  assert.equal((await mnemos.deleteMemory(bank, id)).deleted_count, 1);
  await rejectsWith(mnemos.getMemory(bank, id), { status: 404, code: 'memory_not_found' });

  await mnemos.retain(bank, 'Temporary note.');
  assert.equal((await mnemos.clearMemories(bank)).deleted_count, 1);
  assert.equal((await mnemos.deleteBank(bank)).success, true);
  await rejectsWith(mnemos.getBank(bank), { status: 404, code: 'bank_not_found' });
});

test('supersedes, as_of, include_superseded and a memory history', async () => {
  const [old] = (await mnemos.retain('client-validity', 'Ada lives in Paris.', { timestamp: '2023-01-01T00:00:00Z' }))
    .memory_ids;
  const [now] = (
    await mnemos.retain('client-validity', 'Ada moved to Madrid.', {
      timestamp: '2024-01-01T00:00:00Z',
      supersedes: [old!],
    })
  ).memory_ids;
  const current = await mnemos.recall('client-validity', 'Where does Ada live?');
  assert.deepEqual(
    current.results.map((r) => r.id),
    [now],
  );
  const then = await mnemos.recall('client-validity', 'Where does Ada live?', { as_of: '2023-06-01T00:00:00Z' });
  assert.deepEqual(
    then.results.map((r) => r.id),
    [old],
  );
  const all = await mnemos.listMemories('client-validity', { include_superseded: true });
  assert.equal(all.items.find((m) => m.id === old)?.superseded_by, now);
  const history = await mnemos.memoryHistory('client-validity', old!);
  assert.deepEqual(
    history.items.map((v) => v.change),
    ['create', 'supersede'],
  );
  assert.equal(history.items[1]!.valid_to, '2024-01-01T00:00:00.000Z');
});

test("expires_at on retain and updateMemory, and a bank's retention_days", async () => {
  const bank = 'client-expiry';
  const [id] = (await mnemos.retain(bank, 'Dana has a boarding pass.', { expires_at: '2099-01-01T00:00:00Z' }))
    .memory_ids;
  assert.equal((await mnemos.getMemory(bank, id!)).expires_at, '2099-01-01T00:00:00.000Z');
  assert.equal((await mnemos.updateMemory(bank, id!, { expires_at: null })).expires_at, null);
  const [gone] = (await mnemos.retain(bank, 'Dana had a coupon.', { expires_at: '2001-01-01' })).memory_ids;
  await rejectsWith(mnemos.getMemory(bank, gone!), { status: 404, code: 'memory_not_found' });
  assert.equal((await mnemos.updateBank(bank, { retention_days: 30 })).retention_days, 30);
  const [kept] = (await mnemos.retain(bank, 'Dana takes the early train.')).memory_ids;
  assert.ok((await mnemos.getMemory(bank, kept!)).expires_at !== null, "the bank's retention sets one");
});

test('errors are mapped to MnemosError with status, code, detail and field errors', async () => {
  const invalid = await rejectsWith(mnemos.recall('alice', ''), { status: 400, code: 'validation_failed' });
  assert.ok(invalid.errors?.some((e) => e.pointer === '/query'));
  await rejectsWith(mnemos.recall('alice', 'x', { budget: 'huge' }), { status: 400, code: 'validation_failed' });
  await rejectsWith(mnemos.getMemory('alice', 'not-a-uuid'), { status: 400, code: 'validation_failed' });
  await rejectsWith(mnemos.retain('bad bank id!', 'x'), { status: 400, code: 'validation_failed' });
  await rejectsWith(new Mnemos({ baseUrl: engine.url, tenant: 'other' }).listBanks(), {
    status: 404,
    code: 'tenant_not_found',
  });
  const me = new Mnemos({ baseUrl: engine.url, apiKey: 'mnm_live_x', maxRetries: 0 });
  await rejectsWith(me.listBanks(), { status: 404, code: 'tenant_not_found' });
});

test('reflect answers from memory with citations (fake LLM); LLM failures map to MnemosError', async () => {
  const bank = 'reflect-client';
  const { memory_ids: ids } = await mnemos.retainBatch(bank, [
    'Ivan adopted a grey cat named Pixel.',
    'Ivan works in Lyon.',
  ]);
  const answer = await mnemos.reflect(bank, 'What is the name of the cat Ivan adopted?');
  assert.equal(typeof answer.text, 'string');
  assert.ok(answer.text.length > 0);
  assert.ok(answer.citations.length > 0, 'cites the memory it used');
  for (const id of answer.citations) assert.ok(ids.includes(id), `citation ${id} is a memory of the bank`);

  await rejectsWith(mnemos.reflect(bank, ''), { status: 400, code: 'validation_failed' });
  llm.always = { purpose: 'reflect', behaviour: { kind: 'malformed' } };
  try {
    await rejectsWith(mnemos.reflect(bank, 'What is the name of the cat?'), { status: 502, code: 'llm_bad_answer' });
  } finally {
    llm.always = { purpose: 'extract', behaviour: { kind: 'content', content: { facts: [] } } };
  }
});

test('reflectStream yields the answer in delta events, then the same result reflect answers', async () => {
  const bank = 'reflect-stream-client';
  await mnemos.retainBatch(bank, [
    'Ivan adopted a grey cat named Pixel, who sleeps all afternoon.',
    'Ivan works in Lyon.',
  ]);
  const question = 'What is the name of the cat Ivan adopted?';
  const unary = await mnemos.reflect(bank, question);

  const stream = mnemos.reflectStream(bank, question);
  const deltas: string[] = [];
  let done: ReflectResult | undefined;
  for await (const event of stream) {
    if (event.type === 'delta') deltas.push(event.text);
    else done = event.result;
  }
  assert.ok(deltas.length >= 2, `several delta events (got ${deltas.length})`);
  assert.ok(done);
  assert.equal(deltas.join(''), done.text);
  assert.deepEqual(done, unary);

  // The generator's return value is the result as well.
  const generator = mnemos.reflectStream(bank, question);
  let step = await generator.next();
  while (step.done !== true) step = await generator.next();
  assert.deepEqual(step.value, unary);
});

test('reflectStream: an error event throws MnemosError; leaving early closes the LLM request', async () => {
  const bank = 'reflect-stream-client';
  llm.next({ kind: 'cut-stream', afterChunks: 2 }, 'reflect');
  const seen: string[] = [];
  await rejectsWith(
    (async () => {
      for await (const event of mnemos.reflectStream(bank, 'What is the name of the cat?')) seen.push(event.type);
    })(),
    { status: 503, code: 'llm_unavailable' },
  );
  assert.ok(seen.includes('delta'), 'deltas came before the error');

  const abandoned = llm.streamsAbandoned;
  llm.next({ kind: 'stall-stream', afterChunks: 1 }, 'reflect');
  for await (const event of mnemos.reflectStream(bank, 'What is the name of the cat?')) {
    assert.equal(event.type, 'delta');
    break;
  }
  const deadline = Date.now() + 30_000;
  while (llm.streamsAbandoned === abandoned && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.equal(llm.streamsAbandoned, abandoned + 1);

  await rejectsWith(
    (async () => {
      for await (const event of mnemos.reflectStream(bank, '')) seen.push(event.type);
    })(),
    { status: 400, code: 'validation_failed' },
  );
});

test('typed filters on recall, reflect, listMemories and deleteMatching, over metadata of any JSON', async () => {
  const bank = 'ts-filters';
  const { memory_ids: ids } = await mnemos.retainBatch(bank, [
    { content: 'Ann pruned the orchid.', metadata: { priority: 3, done: true, owner: { name: 'ann' }, labels: ['a'] } },
    { content: 'Bo fed the orchid.', metadata: { priority: 10, done: false, owner: { name: 'bo' } } },
    { content: 'Cy misted the orchid.', metadata: { priority: '3' } },
  ]);
  const urgent: Filter = { 'metadata.priority': { gte: 5 } };
  const recalled = await mnemos.recall(bank, 'orchid', { filter: urgent });
  assert.deepEqual(
    recalled.results.map((r) => r.id),
    [ids[1]],
  );
  assert.deepEqual(recalled.results[0]?.metadata, { priority: 10, done: false, owner: { name: 'bo' } });
  const listed = await mnemos.listMemories(bank, {
    filter: { or: [{ 'metadata.owner.name': 'ann' }, { 'metadata.priority': '3' }] },
  });
  assert.deepEqual(new Set(listed.items.map((m) => m.id)), new Set([ids[0], ids[2]]));
  const reflected = await mnemos.reflect(bank, 'Who fed the orchid?', { filter: { 'metadata.done': false } });
  assert.ok(reflected.text.length > 0);
  // @ts-expect-error: `near` is no operator, so the type refuses it before the server does.
  const bad: Filter = { 'metadata.priority': { near: 3 } };
  const refused = await rejectsWith(mnemos.recall(bank, 'orchid', { filter: bad }), {
    status: 400,
    code: 'validation_failed',
  });
  assert.equal(refused.errors?.[0]?.pointer, '/filter/metadata.priority/near');
  const dry = await mnemos.deleteMatching(bank, { 'metadata.labels': { contains: 'a' } }, { dry_run: true });
  assert.equal(dry.deleted_count, 1);
  const done = await mnemos.deleteMatching(bank, { not: { 'metadata.priority': { exists: false } } });
  assert.equal(done.deleted_count, 3);
  assert.equal((await mnemos.listMemories(bank)).total, 0);
});

test('health and version', async () => {
  const health = await mnemos.health();
  assert.equal(typeof health, 'object');
  const version = await mnemos.version();
  assert.equal(typeof version['version'], 'string');
});

test("generated/types.ts matches the engine's OpenAPI document (regenerate with npm run generate -w @mnemos/client)", async () => {
  const { code, output } = await runScript('scripts/generate-client-types.mjs', ['--check', '--url', engine.url]);
  assert.equal(code, 0, output);
  assert.match(output, /up to date/);
});

test('examples/typescript-quickstart.ts runs against the engine', async () => {
  const { code, output } = await runScript('examples/typescript-quickstart.ts', [engine.url]);
  assert.equal(code, 0, output);
  assert.match(output, /\[raw\] Alice prefers green tea/);
  assert.match(output, /in space acme: Alice is the tech lead/);
  assert.match(output, /reflect: .+\n {2}citations: [0-9a-f]{8}-/);
});

test('retainMessages stores chat turns with their speaker and answers ids per message', async () => {
  const out = await mnemos.retainMessages(
    'chat-client',
    [
      { role: 'user', name: 'Ines', content: 'My flight to Porto leaves on the 3rd.' },
      { role: 'assistant', content: 'Noted, I will remind you the day before.' },
    ],
    { timestamp: '2024-07-01T09:00:00Z', tags: ['travel'] },
  );
  assert.equal(out.items_count, 2);
  assert.deepEqual(
    out.messages?.map((m) => m.duplicate),
    [false, false],
  );
  const first = await mnemos.getMemory('chat-client', out.messages[0]!.memory_ids[0]!);
  assert.equal(first.text, 'Ines: My flight to Porto leaves on the 3rd.');
  assert.deepEqual(first.metadata, { role: 'user', speaker: 'Ines' });
  assert.deepEqual(first.tags, ['travel']);
  const again = await mnemos.retainMessages('chat-client', [
    { role: 'user', name: 'Ines', content: 'My flight to Porto leaves on the 3rd.' },
  ]);
  assert.equal(again.messages?.[0]?.duplicate, true);
  // A caller without types can send any role; the engine refuses an unknown one.
  const unknownRole = { role: 'narrator', content: 'x' } as unknown as ChatMessage;
  await rejectsWith(mnemos.retainMessages('chat-client', [unknownRole]), {
    status: 400,
    code: 'validation_failed',
  });
});

test('recall results carry relevance; min_relevance and a small max_tokens shape the answer', async () => {
  const found = await mnemos.recall('chat-client', 'When does Ines fly to Porto?');
  const top = found.results[0]!;
  assert.equal(top.text, 'Ines: My flight to Porto leaves on the 3rd.');
  assert.ok(top.relevance !== undefined && top.relevance > 0 && top.relevance <= 1);
  const strict = await mnemos.recall('chat-client', 'When does Ines fly to Porto?', { min_relevance: top.relevance });
  assert.ok(strict.results.every((r) => (r.relevance ?? 0) >= top.relevance!));
  const short = await mnemos.recall('chat-client', 'When does Ines fly to Porto?', { max_tokens: 4 });
  assert.equal(short.results.length, 1);
  assert.equal(short.results[0]!.truncated, true);
  assert.ok(top.text.startsWith(short.results[0]!.text));
});

test('iterateMemories and iterateBanks follow next_cursor to the end', async () => {
  const bank = 'cursor-client';
  const out = await mnemos.retainBatch(
    bank,
    Array.from({ length: 5 }, (_, i) => ({ content: `Cursor note ${i}.`, timestamp: `2024-02-0${i + 1}` })),
  );
  const page = await mnemos.listMemories(bank, { limit: 2 });
  assert.ok(page.next_cursor);
  const next = await mnemos.listMemories(bank, { limit: 2, cursor: page.next_cursor });
  assert.deepEqual(
    next.items.map((m) => m.id),
    [out.memory_ids[2], out.memory_ids[1]],
  );
  const ids: string[] = [];
  for await (const memory of mnemos.iterateMemories(bank, { limit: 2 })) ids.push(memory.id);
  assert.deepEqual(ids, [...out.memory_ids].reverse());
  const banks: string[] = [];
  for await (const b of mnemos.iterateBanks({ limit: 1 })) banks.push(b.bank_id);
  assert.ok(banks.includes(bank) && banks.includes('chat-client'));
  assert.equal(new Set(banks).size, banks.length);
  await rejectsWith(mnemos.listMemories(bank, { cursor: 'not-a-cursor' }), { status: 400, code: 'validation_failed' });
});
