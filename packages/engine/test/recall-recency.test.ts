import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generatePeople, TOPICS } from '../bench/updates-scenarios.js';
import { asksAboutPresent } from '../src/recall/recency.js';
import { resolveTemporal } from '../src/recall/temporal.js';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';

/**
 * Newer first among answers to the same question (recency.ts): a value stated and later replaced, with no
 * supersession marked, and a question about the present.
 */

const now = new Date('2024-09-01T00:00:00Z');
const present = (q: string) => asksAboutPresent(q, resolveTemporal(q, now));

describe('questions about the present', () => {
  it('are those that name no time and use no past tense', () => {
    assert.equal(present('Where does Alice live?'), true);
    assert.equal(present("Who is Alice's manager?"), true);
    assert.equal(present('Where did Alice live?'), false);
    assert.equal(present("Who was Alice's manager in March 2023?"), false);
    assert.equal(present('What books has Melanie read?'), false);
    assert.equal(present('Where does Alice live in 2023?'), false);
  });
});

let engine: TestEngine;

before(async () => {
  engine = await startTestEngine();
});

after(async () => {
  await engine.dispose();
});

/** Retains one dated session of "Elena: ..." and "Sam: ..." turns. */
async function session(bank: string, timestamp: string, turns: string[]): Promise<void> {
  const answer = await call(engine.url, 'POST', `/v1/default/banks/${bank}/memories`, {
    items: turns.map((content) => ({ content, timestamp })),
  });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
}

async function texts(bank: string, query: string, asOf?: string): Promise<string[]> {
  const answer = await call<{ results: Array<{ text: string }> }>(
    engine.url,
    'POST',
    `/v1/default/banks/${bank}/memories/recall`,
    { query, query_timestamp: now.toISOString(), ...(asOf === undefined ? {} : { as_of: asOf }) },
  );
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.results.map((r) => r.text);
}

describe('a stale and a current statement, no supersession marked', () => {
  const stale = 'Elena: I live in Vienna.';
  const current = "Elena: Big news: I've relocated to Warsaw.";

  before(async () => {
    await session('elena', '2023-07-12T18:00:00Z', [
      'Sam: How have you been?',
      stale,
      'Sam: Any plans for the weekend?',
      'Elena: Spent the weekend cleaning out the garage.',
      'Elena: My manager Rafael is very supportive.',
    ]);
    await session('elena', '2023-11-09T18:00:00Z', [
      'Sam: Good to hear from you!',
      'Elena: My cousin had a baby girl.',
      current,
      'Sam: That is wonderful news.',
      'Elena: My phone screen cracked again.',
    ]);
    await session('elena', '2024-03-08T18:00:00Z', [
      'Sam: Tell me more!',
      'Elena: Had coffee with Rafael, my old manager.',
      'Elena: I need a haircut badly.',
    ]);
  });

  it('ranks the newer statement first for a question about the present', async () => {
    const ranked = await texts('elena', 'Which city does Elena live in?');
    assert.ok(ranked.includes(stale), 'the older statement is still answered');
    assert.ok(ranked.indexOf(current) < ranked.indexOf(stale), ranked.slice(0, 5).join('\n'));
  });

  it('leaves a question about the past to the ranking alone', async () => {
    const ranked = await texts('elena', 'Which city did Elena live in?');
    assert.ok(ranked.indexOf(stale) < ranked.indexOf(current), ranked.slice(0, 5).join('\n'));
  });
});

describe('an update the ranking puts below the first ten', () => {
  // The knowledge-update bench's first person (bench/updates-scenarios.ts): her holiday plan's update ranks eleventh
  // before the step, below small talk of the first statement's session.
  const alice = generatePeople(TOPICS.length, 31)[0]!;
  const plans = alice.scenarios.find((s) => s.topic === 'plans')!;
  const statement = (step: number) =>
    alice.sessions.flatMap((s) => s.turns).find((t) => t.key === `${plans.id}:${step}`)!.content;

  before(async () => {
    for (const s of alice.sessions)
      await call(engine.url, 'POST', `/v1/default/banks/alice/memories`, {
        items: s.turns.map((t) => ({ content: t.content, timestamp: s.timestamp, document_id: s.key })),
      });
  });

  it('still comes above the statement it replaces', async () => {
    const ranked = await texts('alice', plans.question);
    const current = statement(plans.values.length - 1);
    assert.ok(ranked.includes(current), 'the update is answered');
    for (let step = 0; step < plans.values.length - 1; step++)
      assert.ok(ranked.indexOf(current) < ranked.indexOf(statement(step)), ranked.slice(0, 12).join('\n'));
  });
});

describe('a recall as of an instant, no supersession marked', () => {
  const first = 'Vera: I live in Vienna.';
  const second = "Vera: Big news: I've relocated to Warsaw.";
  const third = 'Vera: I moved to Oslo last month.';

  before(async () => {
    await session('vera', '2023-03-12T18:00:00Z', ['Sam: How have you been?', first, 'Vera: I need a haircut badly.']);
    await session('vera', '2023-09-09T18:00:00Z', ['Sam: Any news?', second, 'Vera: My phone screen cracked again.']);
    await session('vera', '2024-05-08T18:00:00Z', ['Sam: Tell me more!', third]);
  });

  it('answers the statement that held then above the older one, even asked in the past tense', async () => {
    const ranked = await texts('vera', 'Where did Vera live?', '2024-01-15T00:00:00Z');
    assert.ok(!ranked.includes(third), 'a statement made after the instant is not answered');
    assert.ok(ranked.includes(first), 'the older statement is still answered');
    assert.ok(ranked.indexOf(second) < ranked.indexOf(first), ranked.slice(0, 5).join('\n'));
  });
});
