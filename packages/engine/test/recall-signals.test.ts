import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bm25Scores } from '../src/keywords/bm25.js';
import { parseTsvector as parseVector, tsqueryTerms } from '../src/keywords/tsvector.js';
import { namedEntities, speakerOf } from '../src/recall/signals.js';
import { feedbackScores, type FeedbackDoc } from '../src/recall/feedback.js';
import { resolveTemporal, temporalScore } from '../src/recall/temporal.js';
import { countTokens } from '../src/util/tokens.js';
import { call, startTestEngine, type TestEngine } from './helpers/engine.js';

interface Hit {
  id: string;
  text: string;
  space: string;
  score: number;
  scores: Record<string, number>;
  occurred_at: string | null;
  metadata: Record<string, string>;
}
interface RecallAnswer {
  results: Hit[];
  usage: { tokens: number };
  trace?: { stages: Array<{ stage: string; ms: number; candidates?: number }>; total_ms: number };
}
interface RetainAnswer {
  memory_ids: string[];
}

let engine: TestEngine;
before(async () => {
  engine = await startTestEngine();
});
after(async () => {
  await engine?.dispose();
});
const retain = (bank: string, body: unknown) =>
  call<RetainAnswer>(engine.url, 'POST', `/v1/default/banks/${encodeURIComponent(bank)}/memories`, body);
const recall = (bank: string, body: unknown) =>
  call<RecallAnswer>(engine.url, 'POST', `/v1/default/banks/${encodeURIComponent(bank)}/memories/recall`, body);

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('temporal expressions', () => {
  const ref = new Date('2023-08-16T10:00:00Z');
  it('resolves dates, months and relative expressions against the query time', () => {
    const days = (q: string) => resolveTemporal(q, ref).map((i) => [iso(i.start), iso(i.end), i.kind]);
    assert.deepEqual(days('What happened on 7 July, 2023?'), [['2023-07-07', '2023-07-08', 'day']]);
    assert.deepEqual(days('Who came on May 3, 2023?'), [['2023-05-03', '2023-05-04', 'day']]);
    assert.deepEqual(days('What did she do in March 2023?'), [['2023-03-01', '2023-04-01', 'month']]);
    assert.deepEqual(days('Where did we go in June?'), [['2023-06-01', '2023-07-01', 'month']]);
    assert.deepEqual(days('Where did we go in December?'), [['2022-12-01', '2023-01-01', 'month']]);
    assert.deepEqual(days('What did I eat yesterday?'), [['2023-08-15', '2023-08-16', 'day']]);
    assert.deepEqual(days('What did I do last week?'), [['2023-08-02', '2023-08-16', 'week']]);
    assert.deepEqual(days('What happened last month?'), [['2023-07-01', '2023-08-01', 'month']]);
    assert.deepEqual(days('Two weeks ago?'), [['2023-07-29', '2023-08-05', 'week']]);
    assert.deepEqual(days('What is my favourite colour?'), []);
  });
  it('scores 1 inside the interval and decays outside it', () => {
    const [week] = resolveTemporal('last week', ref);
    assert.ok(week);
    assert.equal(temporalScore([week], Date.parse('2023-08-10T00:00:00Z')), 1);
    const near = temporalScore([week], Date.parse('2023-08-17T00:00:00Z'));
    const far = temporalScore([week], Date.parse('2023-06-01T00:00:00Z'));
    assert.ok(near > far && near < 1 && far < 0.01);
    assert.equal(temporalScore([], Date.now()), 0);
    assert.equal(temporalScore([week], null), 0);
  });
});

describe('pseudo-relevance feedback', () => {
  const doc = (...words: string[]): FeedbackDoc => {
    const terms = new Map<string, number>();
    for (const w of words) terms.set(w, (terms.get(w) ?? 0) + 1);
    return { terms: () => terms, get: (t: string) => terms.get(t) ?? 0, length: words.length };
  };
  // A bank of 20 memories: "lake" and "kayak" are rare, "day" is everywhere.
  const df: Record<string, number> = { trip: 2, lake: 3, kayak: 3, day: 15, weather: 4, tax: 2 };
  const corpus = { queryTerms: ['trip'], documentFrequency: (t: string) => df[t] ?? 1, size: 20 };

  it("lifts a candidate that shares the best matches' distinctive words but not the query's", () => {
    const ranked = [
      { doc: doc('trip', 'lake', 'kayak', 'day'), score: 2 },
      { doc: doc('trip', 'lake', 'day'), score: 1.8 },
      { doc: doc('weather', 'day'), score: 0.5 },
      { doc: doc('kayak', 'lake', 'day'), score: 0.4 },
      { doc: doc('tax', 'day'), score: 0.3 },
    ];
    const f = feedbackScores(ranked, corpus);
    assert.equal(f.length, ranked.length);
    assert.ok(f.every((x) => x >= 0 && x <= 1));
    // The kayak-and-lake memory matched no query word, yet scores highest on the expansion terms.
    assert.equal(f[3], 1);
    assert.ok(f[3] > f[2]! && f[3] > f[4]!);
    // A word in most of the bank ("day") and the query's own word are never expansion terms.
    assert.equal(
      feedbackScores(
        [
          { doc: doc('trip', 'day'), score: 1 },
          { doc: doc('day'), score: 0.5 },
        ],
        corpus,
      ).every((x) => x === 0),
      true,
    );
  });

  it('learns nothing from a first pass without a positive score', () => {
    assert.deepEqual(feedbackScores([{ doc: doc('lake', 'kayak'), score: 0 }], corpus), [0]);
    assert.deepEqual(feedbackScores([], corpus), []);
  });
});

describe('keyword scoring and names', () => {
  it('parses tsquery and tsvector text and ranks rarer terms higher (BM25)', () => {
    assert.deepEqual(tsqueryTerms("'cat' | 'pixel' & !'dog''s'"), ['cat', 'pixel', "dog's"]);
    const d = parseVector("'cat':1,4 'grey':2");
    assert.equal(d.terms.get('cat'), 2);
    assert.equal(d.length, 3);
    const docs = ["'cat':1 'x':2", "'pixel':1 'y':2", "'cat':1 'pixel':2"].map((t) => {
      const v = parseVector(t);
      return { tf: v.terms, length: v.length };
    });
    const s = bm25Scores(
      docs,
      ['cat', 'pixel'],
      new Map([
        ['cat', 90],
        ['pixel', 2],
      ]),
      100,
    );
    assert.ok(s[2]! > s[1]! && s[1]! > s[0]!);
  });
  it('finds the speaker prefix and the one name a query mentions', () => {
    assert.equal(speakerOf('Alice: I went hiking.'), 'alice');
    assert.equal(speakerOf('No speaker here'), null);
    assert.deepEqual(namedEntities("What does Bob's sister like?", ['alice', 'bob']), ['bob']);
    assert.deepEqual(namedEntities('What do Alice and Bob share?', ['alice', 'bob']), ['alice', 'bob']);
    assert.deepEqual(namedEntities('What does Bobby like?', ['bob']), []);
  });
});

describe('recall signals through the API', () => {
  it('prefers memories from the week a query names ("last week")', async () => {
    const now = Date.parse('2024-03-20T12:00:00Z');
    await retain('tempo', {
      items: [
        { content: 'I went to a pottery class and made a bowl.', timestamp: new Date(now - 60 * DAY).toISOString() },
        { content: 'I went to a pottery class and made a vase.', timestamp: new Date(now - 5 * DAY).toISOString() },
        { content: 'I went to a pottery class and made a mug.', timestamp: new Date(now - 200 * DAY).toISOString() },
      ],
    });
    const r = await recall('tempo', {
      query: 'What did I make at pottery class last week?',
      query_timestamp: new Date(now).toISOString(),
    });
    assert.equal(r.status, 200);
    assert.match(r.body.results[0]!.text, /vase/);
    assert.equal(r.body.results[0]!.scores['temporal'], 1);
    assert.ok((r.body.results[1]!.scores['temporal'] ?? 1) < 1);
  });

  it('lifts the turn next to a keyword match (neighbour expansion)', async () => {
    const filler = Array.from({ length: 12 }, (_, i) => ({
      content: `Carol: Weather chat number ${i}, it was sunny and warm outside.`,
    }));
    await retain('neigh', {
      document_id: 'chat-1',
      items: [
        ...filler.slice(0, 6),
        { content: 'Dave: Which instrument did you pick up this year?' },
        { content: 'Carol: The cello! I practise every evening now.' },
        ...filler.slice(6),
      ],
    });
    const r = await recall('neigh', { query: 'Which instrument did Carol pick up?' });
    const answer = r.body.results.find((h) => h.text.includes('cello'));
    assert.ok(answer, 'the answer turn is recalled');
    assert.ok(answer.scores['neighbour']! > 0.5, 'its neighbour matched the keywords');
    assert.ok(r.body.results.indexOf(answer) < 3);
  });

  it('lifts the answer two turns after a keyword match (second neighbour)', async () => {
    const filler = Array.from({ length: 12 }, (_, i) => ({
      content: `Gina: Weather chat number ${i}, it was cloudy and mild.`,
    }));
    await retain('neigh2', {
      document_id: 'chat-2',
      items: [
        ...filler.slice(0, 6),
        { content: 'Hugo: Which language did you start learning in spring?' },
        { content: 'Gina: Oh, good question, let me think.' },
        { content: 'Gina: Portuguese! Lessons twice a week.' },
        ...filler.slice(6),
      ],
    });
    const r = await recall('neigh2', { query: 'Which language did Gina start learning?' });
    const answer = r.body.results.find((h) => h.text.includes('Portuguese'));
    assert.ok(answer, 'the answer turn is recalled');
    assert.ok(answer.scores['neighbour2']! > 0.5, 'the turn two before it matched the keywords');
    for (const k of ['neighbour_semantic', 'document_keyword', 'feedback'])
      assert.equal(typeof answer.scores[k], 'number', k);
    const filled = r.body.results.filter((h) => h.text.includes('Weather chat'));
    assert.ok(
      filled.every((h) => r.body.results.indexOf(h) > r.body.results.indexOf(answer)),
      'above every filler turn',
    );
  });

  it('prefers the turns of the person the query names (speaker awareness)', async () => {
    await retain('speak', {
      items: [
        { content: 'Erin: My favourite food is ramen.' },
        { content: 'Frank: My favourite food is tacos.' },
        { content: 'Erin: I went for a run this morning.' },
      ],
    });
    const r = await recall('speak', { query: "What is Frank's favourite food?" });
    assert.match(r.body.results[0]!.text, /^Frank: /);
    assert.equal(r.body.results[0]!.scores['speaker'], 1);
    assert.equal(r.body.results.find((h) => h.text.startsWith('Erin: My'))?.scores['speaker'], 0);
  });

  it('ranks a rare keyword match first and reports every signal', async () => {
    await retain('kw', {
      items: [
        { content: 'The quarterly report mentions revenue growth.' },
        { content: 'Our zeppelin tour over the bay was booked for Friday.' },
        { content: 'The report also mentions staff growth and revenue.' },
      ],
    });
    const r = await recall('kw', { query: 'zeppelin', trace: true });
    assert.match(r.body.results[0]!.text, /zeppelin/);
    for (const hit of r.body.results) {
      assert.equal(typeof hit.score, 'number');
      for (const k of ['semantic', 'keyword', 'neighbour', 'speaker', 'document'])
        assert.equal(typeof hit.scores[k], 'number', k);
    }
    assert.ok(r.body.results[0]!.scores['keyword']! > 0);
    const stages = r.body.trace?.stages.map((s) => s.stage) ?? [];
    for (const s of ['embed_query', 'semantic', 'keyword', 'neighbours', 'fuse', 'hydrate'])
      assert.ok(stages.includes(s), s);
    assert.ok(r.body.trace!.stages.find((s) => s.stage === 'keyword')!.candidates! >= 1);
  });

  it('pushes near-copies below distinct results', async () => {
    await retain('dup', {
      items: [
        { content: 'Gina opened her clothing store downtown in February.' },
        { content: 'Gina opened her clothing store downtown in February!!' },
        { content: 'Gina sells vintage jackets at her clothing store.' },
      ],
    });
    const r = await recall('dup', { query: 'Gina clothing store' });
    assert.equal(r.body.results.length, 3);
    assert.equal(r.body.results[2]!.scores['near_copy'], 1);
    assert.match(r.body.results[2]!.text, /opened/);
    assert.ok(
      r.body.results.slice(0, 2).some((h) => h.text.includes('vintage')),
      'the distinct result comes before the copy',
    );
    assert.ok(r.body.results.slice(0, 2).every((h) => h.scores['near_copy'] === undefined));
  });

  it('never returns a deleted memory', async () => {
    const r = await retain('del', {
      items: [{ content: 'The spare key is under the blue flowerpot.' }, { content: 'The car is parked on level 3.' }],
    });
    const id = r.body.memory_ids[0]!;
    const before = await recall('del', { query: 'Where is the spare key?' });
    assert.equal(before.body.results[0]!.id, id);
    const gone = await call(engine.url, 'DELETE', `/v1/default/banks/del/memories/${id}`);
    assert.equal(gone.status, 200);
    const after = await recall('del', { query: 'Where is the spare key?' });
    assert.ok(after.body.results.every((h) => h.id !== id));
  });

  it('never exceeds max_tokens', async () => {
    await retain('budget', {
      items: Array.from({ length: 30 }, (_, i) => ({
        content: `Note ${i}: the garden needs watering on day ${i} because the tomatoes and basil are thirsty in summer heat.`,
      })),
    });
    for (const maxTokens of [1, 25, 60, 200]) {
      const r = await recall('budget', { query: 'When does the garden need watering?', max_tokens: maxTokens });
      const used = r.body.results.reduce((s, h) => s + countTokens(h.text), 0);
      assert.ok(used <= maxTokens, `${used} <= ${maxTokens}`);
      assert.equal(r.body.usage.tokens, used);
    }
  });

  it('never leaks across spaces', async () => {
    await retain('shared', { space: 'acme', items: [{ content: 'Acme secret: the launch code word is marigold.' }] });
    await retain('shared', { space: 'globex', items: [{ content: 'Globex note: the launch code word is tulip.' }] });
    await retain('shared', { items: [{ content: 'Default space: the launch code word is daisy.' }] });
    for (const [space, word] of [
      ['acme', 'marigold'],
      ['globex', 'tulip'],
      [undefined, 'daisy'],
    ] as const) {
      const r = await recall('shared', { query: 'What is the launch code word?', ...(space ? { space } : {}) });
      assert.ok(r.body.results.length >= 1);
      assert.ok(
        r.body.results.every((h) => h.text.includes(word)),
        `${space ?? 'default'} sees only its own memories`,
      );
    }
  });
});
