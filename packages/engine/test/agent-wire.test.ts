// What agents send and read: chat messages in retain (ids per message, the speaker kept for recall), a relevance
// figure in [0, 1] that a caller can threshold, the best memory trimmed to a budget smaller than it, and list cursors
// that stay put while rows are added.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { countTokens } from '../src/util/tokens.js';
import { truncateToTokens } from '../src/recall/truncate.js';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';

interface MessageOutcome {
  memory_ids: string[];
  duplicate: boolean;
}
interface RetainAnswer {
  memory_ids: string[];
  items_count: number;
  async: boolean;
  operation_id?: string;
  messages?: MessageOutcome[];
}
interface Hit {
  id: string;
  text: string;
  score: number;
  scores: Record<string, number>;
  relevance: number;
  truncated?: boolean;
  metadata: Record<string, string>;
}
interface RecallAnswer {
  results: Hit[];
  usage: { tokens: number };
}
interface MemoryPage {
  items: Array<{ id: string; text: string; metadata: Record<string, string> }>;
  total: number;
  next_cursor: string | null;
}
interface BankPage {
  banks: Array<{ bank_id: string }>;
  next_cursor: string | null;
}

let engine: TestEngine;

before(async () => {
  engine = await startTestEngine();
});
after(async () => {
  await engine?.dispose();
});

const path = (bank: string, rest = '') => `/v1/default/banks/${encodeURIComponent(bank)}/memories${rest}`;
async function retain(bank: string, body: unknown): Promise<RetainAnswer> {
  const r = await call<RetainAnswer>(engine.url, 'POST', path(bank), body);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}
async function recall(bank: string, body: Record<string, unknown>): Promise<RecallAnswer> {
  const r = await call<RecallAnswer>(engine.url, 'POST', path(bank, '/recall'), body);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

const chat = [
  { role: 'user', name: 'Maya', content: 'I adopted a beagle puppy called Biscuit on Saturday.' },
  { role: 'assistant', content: 'Congratulations! How is Biscuit settling in?' },
  { role: 'user', name: 'Maya', content: 'He chewed my running shoes, but he loves the park.' },
  { role: 'user', name: 'Tom', content: 'My sister keeps a parrot that talks all day.' },
];

describe('retain with chat messages', () => {
  it('stores each turn as "speaker: content" with role and speaker, and answers ids per message', async () => {
    const out = await retain('chat', { messages: chat, timestamp: '2024-06-01T10:00:00Z' });
    assert.equal(out.items_count, 4);
    assert.equal(out.messages?.length, 4);
    assert.deepEqual(
      out.messages.map((m) => m.duplicate),
      [false, false, false, false],
    );
    assert.deepEqual(
      out.messages.flatMap((m) => m.memory_ids),
      out.memory_ids,
    );
    const first = await call<{ text: string; metadata: Record<string, string>; occurred_at: string }>(
      engine.url,
      'GET',
      path('chat', `/${out.messages[0]!.memory_ids[0]}`),
    );
    assert.equal(first.body.text, 'Maya: I adopted a beagle puppy called Biscuit on Saturday.');
    assert.deepEqual(first.body.metadata, { role: 'user', speaker: 'Maya' });
    assert.equal(first.body.occurred_at, '2024-06-01T10:00:00.000Z');
    const second = await call<{ text: string; metadata: Record<string, string> }>(
      engine.url,
      'GET',
      path('chat', `/${out.messages[1]!.memory_ids[0]}`),
    );
    assert.equal(second.body.text, 'assistant: Congratulations! How is Biscuit settling in?');
    assert.deepEqual(second.body.metadata, { role: 'assistant', speaker: 'assistant' });
  });

  it("recalls a speaker's turn for a question about that speaker, through the speaker signal", async () => {
    const found = await recall('chat', { query: 'What pet did Maya get?' });
    const top = found.results[0]!;
    assert.equal(top.text, 'Maya: I adopted a beagle puppy called Biscuit on Saturday.');
    assert.equal(top.scores['speaker'], 1);
    const tom = found.results.find((h) => h.text.startsWith('Tom:'));
    assert.ok(!tom || tom.scores['speaker'] === 0, 'another speaker gets no speaker signal');
  });

  it('reports a message already stored as a duplicate with the existing id', async () => {
    const first = await retain('chat-dup', { messages: chat.slice(0, 2) });
    const again = await retain('chat-dup', {
      messages: [chat[0], { role: 'user', name: 'Maya', content: 'Biscuit is eleven weeks old.' }, chat[0]],
    });
    assert.deepEqual(
      again.messages?.map((m) => m.duplicate),
      [true, false, true],
    );
    assert.deepEqual(again.messages[0]!.memory_ids, first.messages?.[0]?.memory_ids);
    assert.deepEqual(again.messages[2]!.memory_ids, first.messages?.[0]?.memory_ids);
    // The same words from another speaker are another memory.
    const other = await retain('chat-dup', { messages: [{ ...chat[0], name: 'Tom' }] });
    assert.equal(other.messages?.[0]?.duplicate, false);
  });

  it('takes messages beside items: the items first, then the messages; top-level fields are defaults', async () => {
    const out = await retain('chat-mixed', {
      items: [{ content: 'The team standup moved to 9:30.' }],
      messages: [{ role: 'user', content: 'Remind me to book the dentist.' }],
      tags: ['work'],
      metadata: { source: 'slack', role: 'ignored' },
    });
    assert.equal(out.items_count, 2);
    assert.equal(out.messages?.length, 1);
    assert.deepEqual(out.messages[0]!.memory_ids, [out.memory_ids[1]]);
    const list = await call<MemoryPage>(engine.url, 'GET', path('chat-mixed'));
    const message = list.body.items.find((m) => m.id === out.memory_ids[1]);
    assert.deepEqual(message?.metadata, { source: 'slack', role: 'user', speaker: 'user' });
  });

  it('answers ids per message on the description-level and org retain paths too', async () => {
    const top = await call<RetainAnswer>(engine.url, 'POST', '/v1/retain', {
      bank_id: 'chat-top',
      messages: [{ role: 'user', name: 'Ravi', content: 'I prefer aisle seats.' }],
    });
    assert.equal(top.status, 200, JSON.stringify(top.body));
    assert.deepEqual(top.body.messages, [{ memory_ids: top.body.memory_ids, duplicate: false }]);
    const org = await call<RetainAnswer>(engine.url, 'POST', '/v1/default/spaces/acme/memories', {
      messages: [{ role: 'system', content: 'Travel policy: economy class for flights under six hours.' }],
    });
    assert.equal(org.status, 200, JSON.stringify(org.body));
    assert.deepEqual(org.body.messages, [{ memory_ids: org.body.memory_ids, duplicate: false }]);
  });

  it('works through async retain: the turns are stored by the job with their speaker', async () => {
    const out = await retain('chat-async', { messages: chat.slice(2), async: true });
    assert.equal(out.async, true);
    assert.equal(out.messages, undefined, 'ids are known once the operation completes');
    const deadline = Date.now() + 60_000;
    for (;;) {
      const op = await call<{ status: string; memory_ids: string[] }>(
        engine.url,
        'GET',
        `/v1/default/operations/${out.operation_id}`,
      );
      if (op.body.status === 'completed') {
        assert.equal(op.body.memory_ids.length, 2);
        break;
      }
      assert.notEqual(op.body.status, 'failed');
      assert.ok(Date.now() < deadline, 'the async retain completes');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const found = await recall('chat-async', { query: 'Which animal does Tom talk about?' });
    assert.equal(found.results[0]?.text, 'Tom: My sister keeps a parrot that talks all day.');
    assert.equal(found.results[0]?.metadata['speaker'], 'Tom');
  });
});

describe('relevance', () => {
  before(async () => {
    await retain('rel', {
      items: [
        'Priya is allergic to peanuts and carries an epinephrine pen.',
        'The quarterly report is due on the fifteenth.',
        'Priya runs the Berlin marathon every September.',
        'The office coffee machine was replaced last week.',
        'Lars plays the trumpet in a jazz band.',
        'The parking garage closes at midnight.',
      ].map((content) => ({ content })),
    });
  });

  it('is in [0, 1], never rises down the list, and ranks the answer highest', async () => {
    const found = await recall('rel', { query: 'What is Priya allergic to?' });
    assert.ok(found.results.length >= 3);
    assert.equal(found.results[0]!.text, 'Priya is allergic to peanuts and carries an epinephrine pen.');
    for (const [i, hit] of found.results.entries()) {
      assert.ok(hit.relevance >= 0 && hit.relevance <= 1, String(hit.relevance));
      if (i > 0) assert.ok(hit.relevance <= found.results[i - 1]!.relevance, 'non-increasing');
    }
    assert.ok(found.results[0]!.relevance > found.results.at(-1)!.relevance, 'the answer stands out');
  });

  it('min_relevance leaves out the results below it and counts only the tokens returned', async () => {
    const all = await recall('rel', { query: 'What is Priya allergic to?' });
    const threshold = all.results[1]!.relevance;
    const kept = all.results.filter((h) => h.relevance >= threshold);
    assert.ok(kept.length < all.results.length, 'the threshold drops something');
    const some = await recall('rel', { query: 'What is Priya allergic to?', min_relevance: threshold });
    assert.deepEqual(
      some.results.map((h) => h.id),
      kept.map((h) => h.id),
    );
    assert.equal(
      some.usage.tokens,
      kept.map((h) => countTokens(h.text)).reduce((a, b) => a + b, 0),
    );
    const none = await recall('rel', { query: 'What is Priya allergic to?', min_relevance: 1 });
    assert.ok(none.results.every((h) => h.relevance === 1));
  });
});

describe('relevance a caller can threshold', () => {
  // The clients' docs example (docs/clients.md): Alice's chat turn, then a plain question at min_relevance 0.2.
  const lisbon = [
    { role: 'user', name: 'Alice', content: 'I moved to Lisbon in May.' },
    { role: 'assistant', content: 'How do you like it?' },
  ];
  const others = [
    'The quarterly report is due on the fifteenth.',
    'Lars plays the trumpet in a jazz band.',
    'The office coffee machine was replaced last week.',
    'The parking garage closes at midnight.',
    'Priya runs the Berlin marathon every September.',
  ];
  /** Some other memories, `n` of them, distinct from each other. */
  const filler = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ content: `${others[i % others.length]!} (note ${i + 1})` }));
  /** A bank of `size` memories: Alice's turn, the assistant's reply (from 2 up) and other memories; answers her turn's id. */
  const bankOf = async (bank: string, size: number) => {
    if (size > 2) await retain(bank, { items: filler(size - 2) });
    const out = await retain(bank, { messages: lisbon.slice(0, Math.min(size, 2)), timestamp: '2024-06-01T10:00:00Z' });
    return out.messages![0]!.memory_ids[0]!;
  };

  it("answers the docs' Lisbon example at min_relevance 0.2 in a bank of 1 and of 5 memories", async () => {
    for (const size of [1, 5]) {
      const id = await bankOf(`lisbon-${size}`, size);
      const found = await recall(`lisbon-${size}`, { query: 'Where did Alice move?', min_relevance: 0.2 });
      assert.equal(found.results[0]?.id, id, `${size}: ${JSON.stringify(found.results)}`);
      assert.ok(found.results[0].relevance >= 0.2);
    }
  });

  it('gives the same memory the same relevance for the same question in banks of 1, 5 and 50 memories', async () => {
    const figures: number[] = [];
    for (const size of [1, 5, 50]) {
      const bank = `lisbon-size-${size}`;
      const id = await bankOf(bank, size);
      const found = await recall(bank, { query: 'Where does Alice live?' });
      // Ranked first in every bank, so no result above it caps its figure.
      const hit = found.results[0];
      assert.equal(hit?.id, id, `${size}: ${JSON.stringify(found.results.map((h) => h.text))}`);
      figures.push(hit.relevance);
    }
    // The figure is a function of the memory's cosine to the query and of the share of the query's terms it holds,
    // neither of which looks at the rest of the bank; the only room left is the float noise of the embedding (six
    // decimals shown), so the tolerance is far below any threshold a caller would set.
    assert.ok(Math.max(...figures) - Math.min(...figures) < 0.001, JSON.stringify(figures));
  });
});

describe('a budget smaller than the best memory', () => {
  const long =
    'Zoltan described the expedition in detail: the team left Ushuaia in a storm, crossed the Drake Passage in ' +
    'four days, anchored off Deception Island, counted chinstrap penguins for a week, and came home with samples ' +
    'of volcanic ash that the laboratory in Hamburg is still analysing this spring.';

  it('answers that memory cut at a word boundary, marked truncated, within the budget', async () => {
    await retain('trunc', { content: long });
    assert.ok(countTokens(long) > 12);
    const found = await recall('trunc', { query: 'Zoltan expedition Drake Passage', max_tokens: 12 });
    assert.equal(found.results.length, 1);
    const hit = found.results[0]!;
    assert.equal(hit.truncated, true);
    assert.ok(long.startsWith(hit.text) && hit.text.length < long.length, hit.text);
    assert.match(long.slice(hit.text.length), /^\s/, 'cut before a space: whole words only');
    assert.ok(countTokens(hit.text) <= 12 && countTokens(hit.text) >= 8, hit.text);
    assert.equal(found.usage.tokens, countTokens(hit.text));
    const whole = await recall('trunc', { query: 'Zoltan expedition Drake Passage' });
    assert.equal(whole.results[0]?.text, long);
    assert.equal(whole.results[0]?.truncated, undefined);
  });

  it('cuts between characters when not even the first word fits', () => {
    const word = 'Pneumonoultramicroscopicsilicovolcanoconiosis'.repeat(3);
    const cut = truncateToTokens(word, 3);
    assert.ok(cut.length > 0 && word.startsWith(cut) && countTokens(cut) <= 3, cut);
    assert.equal(truncateToTokens('Short text.', 50), 'Short text.');
  });
});

describe('cursor pagination', () => {
  it('walks the memories list with next_cursor, unmoved by memories added between pages', async () => {
    const out = await retain('pages', {
      items: Array.from({ length: 7 }, (_, i) => ({
        content: `Page note number ${i}.`,
        timestamp: `2024-01-0${i + 1}T00:00:00Z`,
      })),
    });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor === null ? '?limit=3' : `?limit=3&cursor=${encodeURIComponent(cursor)}`;
      const page = await call<MemoryPage>(engine.url, 'GET', path('pages', query));
      assert.equal(page.status, 200, JSON.stringify(page.body));
      seen.push(...page.body.items.map((m) => m.id));
      cursor = page.body.next_cursor;
      pages++;
      // A newer memory lands at the top of the list: an offset would shift, the cursor does not.
      await retain('pages', { content: `Inserted while paging, ${pages}.`, timestamp: '2025-01-01T00:00:00Z' });
    } while (cursor !== null && pages < 10);
    assert.equal(pages, 3);
    assert.deepEqual(seen, [...out.memory_ids].reverse(), 'every memory once, newest first');
  });

  it('walks the banks list with next_cursor', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor === null ? '?limit=2' : `?limit=2&cursor=${encodeURIComponent(cursor)}`;
      const page = await call<BankPage>(engine.url, 'GET', `/v1/default/banks${query}`);
      assert.equal(page.status, 200, JSON.stringify(page.body));
      seen.push(...page.body.banks.map((b) => b.bank_id));
      cursor = page.body.next_cursor;
      pages++;
      await retain(`fresh-bank-${pages}`, { content: 'A bank written while the list is paged.' });
    } while (cursor !== null && pages < 50);
    const all = await call<BankPage>(engine.url, 'GET', '/v1/default/banks?limit=1000');
    const existing = all.body.banks.map((b) => b.bank_id).filter((id) => !id.startsWith('fresh-bank-'));
    assert.deepEqual(seen, existing, 'every bank that existed once, in order');
    assert.equal(new Set(seen).size, seen.length);
  });
});
