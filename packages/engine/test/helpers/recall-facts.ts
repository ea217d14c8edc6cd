import type { RetainItem } from '../../src/memory/retain.js';
import type { RecallRequest } from '../../src/recall/types.js';

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
