import assert from 'node:assert/strict';
import type { RetainItem } from '../../src/memory/retain.js';
import { parseFilter } from '../../src/filters/parse.js';
import type { RecallOutcome, RecallRequest } from '../../src/recall/types.js';
import type { MemoryService } from '../../src/service/memory-service.js';
import type { RowFilter } from '../../src/vectors/storage/postgres-index.js';

/** A small bank of real sentences, each the answer to one question below. */
export const FACTS = [
  'Alice adopted a grey cat named Pepper from the shelter last spring.',
  'Bob works as a structural engineer designing bridges in Rotterdam.',
  'The team decided to move the weekly planning meeting to Thursday mornings.',
  'Carol is allergic to peanuts and always carries an epinephrine pen.',
  'Our flight to Lisbon leaves from gate 22 at seven in the evening.',
  'Dan finished his first marathon in Berlin in just under four hours.',
  'The quarterly budget review showed that cloud hosting costs doubled.',
  'Erin is learning to play the cello and practices every night after dinner.',
  'The garden tomatoes were ruined by an early frost in September.',
  'Frank prefers green tea without sugar and dislikes coffee entirely.',
  'The new office in Montreal opens on the first of March.',
  'Grace wrote her thesis on coral reef bleaching in the Pacific.',
  'The printer on the third floor jams whenever someone prints on thick paper.',
  'Henry sold his old motorcycle and bought a touring bicycle instead.',
  'The library closes early on Sundays during the summer holidays.',
  'Iris volunteers at the food bank every Saturday morning.',
];

export const QUESTIONS: Array<[question: string, answer: number]> = [
  ["What is the name of Alice's cat?", 0],
  ['What does Bob do for a living?', 1],
  ['When is the planning meeting now?', 2],
  ['What is Carol allergic to?', 3],
  ['Which gate does the Lisbon flight leave from?', 4],
  ['Where did Dan run his marathon?', 5],
  ['What happened to the cloud hosting costs?', 6],
  ['Which instrument is Erin learning?', 7],
  ['What ruined the tomatoes?', 8],
  ['What does Frank like to drink?', 9],
];

/** Retain items of these texts, with these tags. */
export const items = (texts: readonly string[], tags: string[] = []): RetainItem[] =>
  texts.map((content) => ({
    content,
    timestamp: undefined,
    context: undefined,
    metadata: undefined,
    tags,
    documentId: undefined,
    entities: undefined,
  }));

/** A recall of the default space of `bankId`, 100 candidates, traced. */
export const request = (bankId: string, query: string, extra: Partial<RecallRequest> = {}): RecallRequest => ({
  tenant: 'default',
  bankId,
  space: 'default',
  query,
  maxTokens: 4096,
  candidates: 100,
  includeOrg: false,
  types: undefined,
  tags: undefined,
  tagsMatch: 'any',
  queryTimestamp: new Date(),
  trace: true,
  ...extra,
});

/** Retains `texts` into a bank's space with these tags, synchronously; answers the new memories' ids. */
export type RetainTexts = (
  tenant: string,
  bankId: string,
  texts: readonly string[],
  space?: string,
  tags?: string[],
) => Promise<string[]>;

/** A retain of `engine`'s service, as RetainTexts. */
export function retainOn(engine: { service: MemoryService }): RetainTexts {
  return async (tenant, bankId, texts, space = 'default', tags = []) => {
    const r = await engine.service.retain({
      partition: { tenant, bankId, space },
      items: items(texts, tags),
      async: false,
      maxNewMemories: undefined,
    });
    assert.equal(r.async, false);
    return r.async ? [] : r.memoryIds;
  };
}

/**
 * FACTS in default/main, then the same sentences where a recall of default/main must never look: another bank, another
 * space and another tenant. Answers the ids of FACTS in default/main.
 */
export async function retainFactBanks(retain: RetainTexts): Promise<string[]> {
  const ids = await retain('default', 'main', FACTS);
  await retain('default', 'elsewhere', FACTS);
  await retain(
    'default',
    'main',
    FACTS.map((f) => `${f} (noted at work)`),
    'work',
  );
  await retain(
    'acme',
    'main',
    FACTS.map((f) => `${f} (acme copy)`),
  );
  return ids;
}

/** Checks that recalls through `recallWith` honour tags (Hindsight's tags_match) and types, in a bank of their own. */
export async function checkTagsAndTypes(
  retain: RetainTexts,
  recallWith: (r: RecallRequest) => Promise<RecallOutcome>,
): Promise<void> {
  const ids = (o: RecallOutcome) => o.results.map((h) => h.memory.id);
  const tagged = await retain('default', 'tagged', ['Mangoes are sweet tropical fruit.'], 'default', ['fruit']);
  const plain = await retain('default', 'tagged', ['Broccoli is a green vegetable people steam.']);
  await retain('default', 'tagged', ['Carrots are orange root vegetables.'], 'default', ['vegetable']);
  const strict = await recallWith(request('tagged', 'food', { tags: ['fruit'], tagsMatch: 'any_strict' }));
  assert.deepEqual(ids(strict), tagged);
  const lenient = await recallWith(request('tagged', 'food', { tags: ['fruit'], tagsMatch: 'any' }));
  assert.deepEqual(new Set(ids(lenient)), new Set([...tagged, ...plain]));
  const exact = await recallWith(request('tagged', 'food', { tags: [], tagsMatch: 'exact' }));
  assert.deepEqual(ids(exact), plain);
  const none = await recallWith(request('tagged', 'food', { types: ['world'] }));
  assert.deepEqual(ids(none), [], 'every memory here is raw');
}

/** A recall's filter on the default space, with `extra` changes. */
export function rowFilter(extra: Partial<RowFilter> = {}): RowFilter {
  return {
    space: 'default',
    types: undefined,
    tags: undefined,
    tagsMatch: 'any',
    validity: { kind: 'current', now: new Date() },
    ...extra,
  };
}

/**
 * Recall's filter expression on a tier: `filler` (turns about other things, project "other") outnumber the candidates
 * a recall ranks, so the memories of project "apollo" (about orchids and tomatoes, unlike the question) are answered
 * only when the filter narrows the candidates before ranking. Also checks metadata, tags, document_id, timestamp and
 * created_at conditions, `and`/`or`/`not`, and that `tags` still narrows beside a filter.
 */
export async function checkFilterExpression(
  service: MemoryService,
  filler: readonly string[],
  recallWith: (r: RecallRequest) => Promise<RecallOutcome>,
): Promise<void> {
  const bankId = 'filtered';
  const store = async (entries: RetainItem[]) => {
    const r = await service.retain({
      partition: { tenant: 'default', bankId, space: 'default' },
      items: entries,
      async: false,
      maxNewMemories: undefined,
    });
    assert.equal(r.async, false);
    return r.async ? [] : r.memoryIds;
  };
  await store(items(filler).map((i) => ({ ...i, metadata: { project: 'other' } })));
  const at = (day: string) => new Date(`${day}T12:00:00Z`);
  const [orchid, tomato, draft] = await store([
    {
      ...items(['Quentin photographed a rare ghost orchid in the swamp.'], ['photo'])[0]!,
      metadata: { project: 'apollo', priority: 3, done: true, labels: ['macro', 1], owner: { name: 'ann', level: 2 } },
      documentId: 'doc-a',
      timestamp: at('2024-03-01'),
    },
    {
      ...items(['Hail ruined the tomatoes in the allotment.'], ['garden'])[0]!,
      metadata: { project: 'apollo', priority: 10, done: false, labels: ['garden'], owner: { name: 'bo' } },
      timestamp: at('2023-06-01'),
    },
    {
      ...items(['Draft: the orchid photos need captions.'], ['photo', 'draft'])[0]!,
      metadata: { project: 'apollo', stage: 'draft', priority: '3', labels: [2.5] },
      timestamp: at('2024-05-01'),
    },
  ]);
  const question = 'What did Caroline say about her weekend?';
  const recalled = async (filter: unknown, extra: Partial<RecallRequest> = {}) => {
    const outcome = await recallWith(request(bankId, question, { filter: parseFilter(filter, '/filter'), ...extra }));
    return new Set(outcome.results.map((h) => h.memory.id));
  };
  assert.deepEqual(await recalled({ 'metadata.project': 'apollo' }), new Set([orchid, tomato, draft]));
  assert.deepEqual(
    await recalled({ and: [{ 'metadata.project': 'apollo' }, { not: { tags: { contains: 'draft' } } }] }),
    new Set([orchid, tomato]),
  );
  assert.deepEqual(
    await recalled({ and: [{ 'metadata.project': 'apollo' }, { timestamp: { gte: '2024-01-01' } }] }),
    new Set([orchid, draft]),
  );
  assert.deepEqual(
    await recalled({ or: [{ document_id: 'doc-a' }, { 'metadata.stage': { exists: true } }] }),
    new Set([orchid, draft]),
  );
  assert.deepEqual(await recalled({ created_at: { lt: '2000-01-01' } }), new Set());
  // Metadata of any JSON: numbers compare as numbers (10 > 3, and the string '3' is no number), booleans, lists and
  // nested keys, each operator once.
  const typed: Array<[filter: unknown, expected: string[]]> = [
    [{ 'metadata.priority': { gte: 3 } }, [orchid!, tomato!]],
    [{ 'metadata.priority': { gt: 3 } }, [tomato!]],
    [{ 'metadata.priority': { lte: 3 } }, [orchid!]],
    [{ 'metadata.priority': { lt: 10 } }, [orchid!]],
    [{ 'metadata.priority': 3 }, [orchid!]],
    [{ 'metadata.priority': '3' }, [draft!]],
    [{ 'metadata.priority': { in: [10, '3'] } }, [tomato!, draft!]],
    [{ and: [{ 'metadata.project': 'apollo' }, { 'metadata.priority': { nin: [3, 10] } }] }, [draft!]],
    [{ 'metadata.done': false }, [tomato!]],
    [{ and: [{ 'metadata.project': 'apollo' }, { 'metadata.done': { ne: true } }] }, [tomato!, draft!]],
    [{ 'metadata.labels': { contains: 1 } }, [orchid!]],
    [{ 'metadata.labels': { contains: 2.5 } }, [draft!]],
    [{ 'metadata.labels': ['garden'] }, [tomato!]],
    [{ 'metadata.owner.name': 'bo' }, [tomato!]],
    [{ 'metadata.owner.level': { exists: true } }, [orchid!]],
    [{ 'metadata.owner': { eq: { level: 2, name: 'ann' } } }, [orchid!]],
  ];
  for (const [filter, expected] of typed) {
    assert.deepEqual(await recalled(filter), new Set(expected), JSON.stringify(filter));
  }
  assert.deepEqual(
    await recalled({ 'metadata.project': 'apollo' }, { tags: ['garden'], tagsMatch: 'any_strict' }),
    new Set([tomato]),
  );
}
