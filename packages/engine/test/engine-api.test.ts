import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';

interface Hit {
  id: string;
  bank_id: string;
  text: string;
  space: string;
  score: number;
  scores: Record<string, number>;
  org?: boolean;
  type: string;
  occurred_at: string | null;
  metadata: Record<string, string>;
  tags: string[];
}
interface RecallAnswer {
  results: Hit[];
  usage: { tokens: number };
  trace?: { stages: Array<{ stage: string; ms: number }> };
}
interface RetainAnswer {
  success: boolean;
  bank_id: string;
  items_count: number;
  memory_ids: string[];
  async: boolean;
}
interface ListAnswer {
  items: Array<{ id: string; text: string }>;
  total: number;
  limit: number;
  offset: number;
}

let engine: TestEngine;
const base = () => engine.url;

before(async () => {
  engine = await startTestEngine();
});
after(async () => {
  await engine?.dispose();
});

const retain = (bank: string, body: unknown) =>
  call<RetainAnswer>(base(), 'POST', `/v1/default/banks/${encodeURIComponent(bank)}/memories`, body);
const recall = (bank: string, body: unknown) =>
  call<RecallAnswer>(base(), 'POST', `/v1/default/banks/${encodeURIComponent(bank)}/memories/recall`, body);

describe('retain and recall', () => {
  it('round-trips the single-content body form and answers memory ids', async () => {
    const r = await retain('alice', { content: 'Alice adopted a grey cat named Pixel.' });
    assert.equal(r.status, 200);
    assert.equal(r.body.success, true);
    assert.equal(r.body.items_count, 1);
    assert.equal(r.body.memory_ids.length, 1);
    const found = await recall('alice', { query: 'What is the name of the cat?' });
    assert.equal(found.status, 200);
    assert.equal(found.body.results[0]?.id, r.body.memory_ids[0]);
    assert.equal(found.body.results[0]?.text, 'Alice adopted a grey cat named Pixel.');
    assert.equal(found.body.results[0]?.type, 'raw');
    assert.ok(found.body.results[0].score > 0);
    assert.ok('semantic' in found.body.results[0].scores);
  });

  it('round-trips the items body form with timestamps, metadata, tags and document ids', async () => {
    const r = await retain('bob@example.com', {
      items: [
        {
          content: 'Bob moved to Lisbon in spring.',
          timestamp: '2024-03-10',
          metadata: { source: 'chat' },
          tags: ['travel'],
          document_id: 'd1',
        },
        {
          content: 'Bob works as a marine biologist.',
          timestamp: '2024-03-10T09:15:00.123+02:00',
          context: 'intro call',
        },
        { content: 'Bob dislikes loud music.', timestamp: 'unset', tags: '["taste"]' },
      ],
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.bank_id, 'bob@example.com');
    assert.equal(r.body.memory_ids.length, 3);
    const list = await call<{
      items: Array<{
        id: string;
        occurred_at: string | null;
        metadata: Record<string, string>;
        tags: string[];
        context: string | null;
      }>;
    }>(base(), 'GET', '/v1/default/banks/bob%40example.com/memories?limit=10');
    const byId = new Map(list.body.items.map((m) => [m.id, m]));
    assert.equal(byId.get(r.body.memory_ids[0]!)?.occurred_at, '2024-03-10T00:00:00.000Z');
    assert.deepEqual(byId.get(r.body.memory_ids[0]!)?.metadata, { source: 'chat' });
    assert.deepEqual(byId.get(r.body.memory_ids[0]!)?.tags, ['travel']);
    assert.equal(byId.get(r.body.memory_ids[1]!)?.occurred_at, '2024-03-10T07:15:00.123Z');
    assert.equal(byId.get(r.body.memory_ids[1]!)?.context, 'intro call');
    assert.equal(byId.get(r.body.memory_ids[2]!)?.occurred_at, null);
    assert.deepEqual(byId.get(r.body.memory_ids[2]!)?.tags, ['taste']);
    const found = await recall('bob@example.com', { query: "What is Bob's job?" });
    assert.equal(found.body.results[0]?.text, 'Bob works as a marine biologist.');
  });

  it('is idempotent on identical content', async () => {
    const first = await retain('idem', { content: 'The launch is on Friday.' });
    const second = await retain('idem', {
      items: [{ content: 'The launch is on Friday.' }, { content: 'The launch is on Friday.' }],
    });
    assert.deepEqual(second.body.memory_ids, [first.body.memory_ids[0], first.body.memory_ids[0]]);
    const list = await call<ListAnswer>(base(), 'GET', '/v1/default/banks/idem/memories');
    assert.equal(list.body.total, 1);
  });

  it('stores identical content once under concurrent retains', async () => {
    const body = { items: [{ content: 'The ferry leaves at dawn.' }, { content: 'The ferry returns at dusk.' }] };
    const answers = await Promise.all([1, 2, 3, 4].map(() => retain('racing', body)));
    assert.ok(answers.every((x) => x.status === 200));
    assert.equal(new Set(answers.map((x) => x.body.memory_ids.join())).size, 1);
    const list = await call<ListAnswer>(base(), 'GET', '/v1/default/banks/racing/memories');
    assert.equal(list.body.total, 2);
  });

  it('keeps spaces apart and blends org memory only with include_org', async () => {
    await retain('carol', { content: 'Carol prefers tea over coffee.', space: 'acme' });
    await retain('carol', { content: 'Carol prefers coffee in the default space.' });
    const org = await call<RetainAnswer>(base(), 'POST', '/v1/default/spaces/acme/memories', {
      content: 'Acme policy: all hot drinks are free in the office.',
    });
    assert.equal(org.status, 200);

    const inAcme = await recall('carol', { query: 'drinks preference', space: 'acme' });
    assert.ok(inAcme.body.results.length > 0);
    assert.ok(inAcme.body.results.every((h) => h.space === 'acme' && h.org === undefined));
    assert.ok(!inAcme.body.results.some((h) => h.text.includes('default space')));

    const inDefault = await recall('carol', { query: 'drinks preference' });
    assert.ok(inDefault.body.results.every((h) => h.space === 'default'));
    assert.ok(!inDefault.body.results.some((h) => h.text.includes('tea over coffee')));

    const blended = await recall('carol', { query: 'are hot drinks free?', space: 'acme', include_org: true });
    const orgHit = blended.body.results.find((h) => h.org === true);
    assert.ok(orgHit, 'org memory is blended in');
    assert.equal(orgHit.text, 'Acme policy: all hot drinks are free in the office.');
    // An org memory names its bank the same way in every answer: as the retain answered it.
    assert.equal(org.body.bank_id, 'org:acme');
    assert.equal(orgHit.bank_id, 'org:acme');

    const orgOnly = await call<RecallAnswer>(base(), 'POST', '/v1/default/spaces/acme/memories/recall', {
      query: 'hot drinks',
    });
    assert.equal(orgOnly.body.results.length, 1);
    assert.equal(orgOnly.body.results[0]?.bank_id, 'org:acme');
    const otherSpace = await recall('carol', { query: 'are hot drinks free?', space: 'other', include_org: true });
    assert.equal(otherSpace.body.results.length, 0);
  });

  it('answers empty results for an unknown bank', async () => {
    const r = await recall('nobody-here', { query: 'anything at all' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.results, []);
  });

  it('never exceeds max_tokens and reports a trace when asked', async () => {
    await retain('budget', {
      items: Array.from({ length: 12 }, (_, i) => ({
        content: `Note ${i}: the garden needs watering on day ${i} of the trip.`,
      })),
    });
    const r = await recall('budget', { query: 'garden watering', max_tokens: 40, trace: true });
    assert.ok(r.body.results.length >= 1);
    assert.ok(r.body.usage.tokens <= 40);
    assert.ok(r.body.results.length < 12);
    assert.ok(r.body.trace && r.body.trace.stages.some((s) => s.stage === 'embed_query'));
  });

  it('filters by types and tags', async () => {
    await retain('tagged', {
      items: [
        { content: 'Red apples are sweet.', tags: ['fruit'] },
        { content: 'Green peppers are crunchy.', tags: ['veg'] },
        { content: 'Water is wet.' },
      ],
    });
    const strict = await recall('tagged', { query: 'food', tags: ['fruit'], tags_match: 'any_strict' });
    assert.deepEqual(
      strict.body.results.map((h) => h.text),
      ['Red apples are sweet.'],
    );
    const any = await recall('tagged', { query: 'food', tags: ['fruit'] });
    assert.deepEqual(new Set(any.body.results.map((h) => h.text)), new Set(['Red apples are sweet.', 'Water is wet.']));
    const noneOfType = await recall('tagged', { query: 'food', types: ['world'] });
    assert.equal(noneOfType.body.results.length, 0);
  });

  it('accepts the Hindsight client recall body', async () => {
    const r = await recall('alice', {
      query: 'cat',
      budget: 'mid',
      include: {},
      max_tokens: 4096,
      trace: false,
      types: null,
      query_timestamp: '2023-05-30T23:40:00',
    });
    assert.equal(r.status, 200);
    assert.ok(r.body.results.length > 0);
  });

  it('serves description-level retain and recall with the bank in the body', async () => {
    const r = await call<RetainAnswer>(base(), 'POST', '/v1/retain', {
      bank_id: 'desc',
      content: 'Dana speaks Portuguese fluently.',
    });
    assert.equal(r.status, 200);
    const found = await call<RecallAnswer>(base(), 'POST', '/v1/recall', {
      bank_id: 'desc',
      query: 'Which language does Dana speak?',
    });
    assert.equal(found.body.results[0]?.id, r.body.memory_ids[0]);
  });
});

describe('memories', () => {
  it('lists with pagination and filters, and gets one', async () => {
    await retain('pages', {
      items: Array.from({ length: 7 }, (_, i) => ({
        content: `Entry number ${i} about sailing`,
        timestamp: `2024-01-0${i + 1}T10:00:00Z`,
      })),
    });
    const page1 = await call<ListAnswer>(base(), 'GET', '/v1/default/banks/pages/memories?limit=3&offset=0');
    const page3 = await call<ListAnswer>(base(), 'GET', '/v1/default/banks/pages/memories/list?limit=3&offset=6');
    assert.equal(page1.body.total, 7);
    assert.equal(page1.body.items.length, 3);
    assert.equal(page1.body.items[0]?.text, 'Entry number 6 about sailing');
    assert.equal(page3.body.items.length, 1);
    assert.equal(page3.body.items[0]?.text, 'Entry number 0 about sailing');
    const since = await call<ListAnswer>(
      base(),
      'GET',
      '/v1/default/banks/pages/memories?since=2024-01-05&until=2024-01-07',
    );
    assert.deepEqual(
      since.body.items.map((m) => m.text),
      ['Entry number 5 about sailing', 'Entry number 4 about sailing'],
    );
    const q = await call<ListAnswer>(base(), 'GET', '/v1/default/banks/pages/memories?q=number%203');
    assert.ok(q.body.items.some((m) => m.text === 'Entry number 3 about sailing'));
    const one = await call<{ id: string; text: string; fact_type: string }>(
      base(),
      'GET',
      `/v1/default/banks/pages/memories/${page1.body.items[0].id}`,
    );
    assert.equal(one.body.text, 'Entry number 6 about sailing');
    assert.equal(one.body.fact_type, 'raw');
  });

  it('edits text, tags and metadata, and invalidates', async () => {
    const r = await retain('edit', { content: 'Eve lives in Berlin.' });
    const id = r.body.memory_ids[0]!;
    const patched = await call<{ text: string; tags: string[]; metadata: Record<string, string> }>(
      base(),
      'PATCH',
      `/v1/default/banks/edit/memories/${id}`,
      { text: 'Eve lives in Munich.', tags: ['home'], metadata: { checked: 'yes' } },
    );
    assert.equal(patched.status, 200);
    assert.equal(patched.body.text, 'Eve lives in Munich.');
    assert.deepEqual(patched.body.tags, ['home']);
    const found = await recall('edit', { query: 'Which city does Eve live in, Munich?' });
    assert.equal(found.body.results[0]?.text, 'Eve lives in Munich.');
    const inv = await call(base(), 'PATCH', `/v1/default/banks/edit/memories/${id}`, { state: 'invalidated' });
    assert.equal(inv.status, 200);
    const after = await recall('edit', { query: 'Where does Eve live?' });
    assert.equal(after.body.results.length, 0);
  });

  it('refuses PATCH text a retain would cut into more than one memory, naming the limit; the memory keeps its text', async () => {
    const id = (await retain('edit-bound', { content: 'Finn keeps goats.' })).body.memory_ids[0]!;
    const edit = (text: string) =>
      call<{ code: string; detail: string }>(base(), 'PATCH', `/v1/default/banks/edit-bound/memories/${id}`, { text });
    // Over 1,200 characters; and within them but over 1,200 tokens (each goat is two tokens and two characters).
    const tooLong = 'Finn keeps goats on the hill above the village. '.repeat(30);
    const tooDense = '\u{1F410}'.repeat(600);
    for (const text of [tooLong, tooDense]) {
      assert.ok((await retain('edit-bound-pieces', { content: text })).body.memory_ids.length > 1);
      const over = await edit(text);
      assert.equal(over.status, 400, JSON.stringify(over.body));
      assert.equal(over.body.code, 'validation_failed');
      assert.match(over.body.detail, /1200/);
      assert.match(over.body.detail, /retain/i);
    }
    const got = await call<{ text: string }>(base(), 'GET', `/v1/default/banks/edit-bound/memories/${id}`);
    assert.equal(got.body.text, 'Finn keeps goats.');
    const fits = 'Finn keeps goats. '.repeat(66);
    assert.equal((await retain('edit-bound-pieces', { content: fits })).body.memory_ids.length, 1);
    const within = await call<{ text: string }>(base(), 'PATCH', `/v1/default/banks/edit-bound/memories/${id}`, {
      text: fits,
    });
    assert.equal(within.status, 200, JSON.stringify(within.body));
    assert.equal(within.body.text, fits);
  });

  it('hard-deletes: a deleted memory is never recalled or listed again', async () => {
    const r = await retain('del', {
      items: [{ content: 'The vault code is 4812.' }, { content: 'The office opens at nine.' }],
    });
    const [secret] = r.body.memory_ids;
    const del = await call<{ success: boolean; deleted_count: number }>(
      base(),
      'DELETE',
      `/v1/default/banks/del/memories/${secret}`,
    );
    assert.equal(del.status, 200);
    assert.equal(del.body.deleted_count, 1);
    const found = await recall('del', { query: 'vault code 4812' });
    assert.ok(!found.body.results.some((h) => h.id === secret));
    const got = await call(base(), 'GET', `/v1/default/banks/del/memories/${secret}`);
    assert.equal(got.status, 404);
    const again = await call(base(), 'DELETE', `/v1/default/banks/del/memories/${secret}`);
    assert.equal(again.status, 404);
    const count = await engine.engine.db.query<{ n: number }>('SELECT count(*)::int AS n FROM memories WHERE id = $1', [
      secret!,
    ]);
    assert.equal(count[0]?.n, 0);
  });

  it('clears a selection of memories', async () => {
    await retain('clear', { items: [{ content: 'one in default' }, { content: 'two in default' }] });
    await retain('clear', { content: 'three in other', space: 'other' });
    const cleared = await call<{ deleted_count: number }>(
      base(),
      'DELETE',
      '/v1/default/banks/clear/memories?space=default',
    );
    assert.equal(cleared.body.deleted_count, 2);
    const left = await call<ListAnswer>(base(), 'GET', '/v1/default/banks/clear/memories');
    assert.deepEqual(
      left.body.items.map((m) => m.text),
      ['three in other'],
    );
  });
});

describe('banks', () => {
  it('creates, reads, patches, lists and deletes banks', async () => {
    const put = await call<{
      bank_id: string;
      name: string;
      mission: string;
      background: string;
      disposition: Record<string, number>;
    }>(base(), 'PUT', '/v1/default/banks/profiled', {
      name: 'Profiled',
      background: 'I am a careful assistant.',
      disposition: { skepticism: 4 },
    });
    assert.equal(put.status, 200);
    assert.equal(put.body.name, 'Profiled');
    assert.equal(put.body.background, 'I am a careful assistant.');
    assert.deepEqual(put.body.disposition, { skepticism: 4, literalism: 3, empathy: 3 });
    const patched = await call<{ mission: string; name: string }>(base(), 'PATCH', '/v1/default/banks/profiled', {
      mission: 'Track decisions.',
    });
    assert.equal(patched.body.mission, 'Track decisions.');
    assert.equal(patched.body.name, 'Profiled');
    const profile = await call<{ bank_id: string }>(base(), 'GET', '/v1/default/banks/profiled/profile');
    assert.equal(profile.body.bank_id, 'profiled');
    const missing = await call(base(), 'PATCH', '/v1/default/banks/never-made', { mission: 'x' });
    assert.equal(missing.status, 404);
    const listed = await call<{ banks: Array<{ bank_id: string }>; total: number }>(
      base(),
      'GET',
      '/v1/default/banks?q=profil',
    );
    assert.deepEqual(
      listed.body.banks.map((b) => b.bank_id),
      ['profiled'],
    );
  });

  it('deleting a bank erases its memories and is idempotent', async () => {
    await retain('doomed', { items: [{ content: 'first doomed fact' }, { content: 'second doomed fact' }] });
    const del = await call<{ success: boolean; deleted_count: number }>(base(), 'DELETE', '/v1/default/banks/doomed');
    assert.equal(del.body.deleted_count, 2);
    const found = await recall('doomed', { query: 'doomed fact' });
    assert.equal(found.body.results.length, 0);
    const get = await call(base(), 'GET', '/v1/default/banks/doomed');
    assert.equal(get.status, 404);
    const again = await call<{ success: boolean; deleted_count: number }>(base(), 'DELETE', '/v1/default/banks/doomed');
    assert.equal(again.status, 200);
    assert.equal(again.body.deleted_count, 0);
  });
});

describe('service endpoints', () => {
  it('serves health, version, metrics, OpenAPI and docs', async () => {
    const health = await call<{ status: string }>(base(), 'GET', '/health');
    assert.equal(health.body.status, 'healthy');
    const live = await call<{ status: string }>(base(), 'GET', '/health/live');
    assert.equal(live.body.status, 'alive');
    const version = await call<{ features: { embedding_dimension: number; llm: boolean } }>(base(), 'GET', '/version');
    assert.equal(version.body.features.embedding_dimension, 384);
    assert.equal(version.body.features.llm, false);
    const metrics = await fetch(`${base()}/metrics`).then((r) => r.text());
    assert.match(metrics, /mnemos_http_request_duration_seconds_bucket/);
    assert.match(metrics, /mnemos_operations_total\{operation="recall"\}/);
    // The tokens sent to the model, and what they became once each batch was padded to its longest text.
    const counter = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1]);
    assert.ok(counter('mnemos_embedding_tokens_total') > 0, 'tokens embedded');
    assert.ok(counter('mnemos_embedding_padded_tokens_total') >= counter('mnemos_embedding_tokens_total'));
    const doc = await call<{ openapi: string; paths: Record<string, Record<string, { operationId?: string }>> }>(
      base(),
      'GET',
      '/openapi.json',
    );
    assert.equal(doc.body.openapi, '3.1.0');
    assert.equal(doc.body.paths['/v1/retain']?.post?.operationId, 'retain');
    assert.equal(doc.body.paths['/v1/recall']?.post?.operationId, 'recall');
    assert.ok(doc.body.paths['/v1/{tenant}/banks/{bank}/memories/recall']);
    const docs = await fetch(`${base()}/docs/`);
    assert.equal(docs.status, 200);
    assert.match(await docs.text(), /swagger/i);
  });

  it('lists in /openapi.json the problem codes each operation can answer, by status', async () => {
    type Operation = { 'x-problem-codes'?: string[]; responses: Record<string, { description: string }> };
    const doc = await call<{ paths: Record<string, Record<string, Operation>> }>(base(), 'GET', '/openapi.json');
    const getMemory = doc.body.paths['/v1/{tenant}/banks/{bank}/memories/{id}']!['get']!;
    assert.ok(getMemory['x-problem-codes']?.includes('memory_not_found'));
    assert.ok(getMemory['x-problem-codes']?.includes('validation_failed'));
    assert.match(getMemory.responses['404']!.description, /memory_not_found/);
    const reflectBank = doc.body.paths['/v1/{tenant}/banks/{bank}/reflect']!['post']!;
    assert.ok(reflectBank['x-problem-codes']?.includes('llm_not_configured'));
    assert.match(reflectBank.responses['503']!.description, /llm_not_configured/);
    const retain = doc.body.paths['/v1/retain']!['post']!;
    assert.match(retain.responses['413']!.description, /too_many_memories/);
  });

  it('serves only the default tenant without an auth token', async () => {
    const r = await call<{ code: string }>(base(), 'POST', '/v1/acme/banks/x/memories/recall', { query: 'hi' });
    assert.equal(r.status, 404);
    assert.equal(r.body.code, 'tenant_not_found');
  });

  it('answers a malformed reflect body with its 400 even without an LLM', async () => {
    const r = await call<{ code: string; errors?: Array<{ pointer: string }> }>(
      base(),
      'POST',
      '/v1/default/banks/alice/reflect',
      { query: 'What pets?', fact_types: [] },
    );
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'validation_failed');
    assert.equal(r.body.errors?.[0]?.pointer, '/fact_types');
  });

  it('answers reflect with 503 llm_not_configured when no LLM is set', async () => {
    const r = await call<{ code: string }>(base(), 'POST', '/v1/default/banks/alice/reflect', { query: 'What pets?' });
    assert.equal(r.status, 503);
    assert.equal(r.body.code, 'llm_not_configured');
    assert.match(r.headers.get('content-type') ?? '', /application\/problem\+json/);
  });
});
