/**
 * The knowledge-update benchmark's data (updates.ts): generated, deterministic for a seed. Each person is one bank, a
 * conversation in dated sessions between the person and a friend. For each of five topics (people, places, jobs,
 * preferences, plans) the person states a value and later replaces it, once or twice: explicitly ("I moved to
 * Berlin"), implicitly ("still unpacking boxes in my new place in Berlin"), or explicitly and then naming the old value
 * again (a distractor: "I still miss the food in Lisbon"). Small talk fills the sessions. Every scenario asks about the
 * present ("Where does Alice live?") and about a past date, when an earlier value held.
 */

export const TOPICS = ['people', 'places', 'jobs', 'preferences', 'plans'] as const;
type Topic = (typeof TOPICS)[number];
export const UPDATE_KINDS = ['explicit', 'implicit', 'distractor'] as const;
type UpdateKind = (typeof UPDATE_KINDS)[number];

/** One turn of a session: its text ("Speaker: words") and, for a scenario's statements, which step it states. */
interface Turn {
  content: string;
  /** `scenario:step` for the statement of a value, `scenario:d` for a distractor; absent for small talk. */
  key?: string;
}

interface Session {
  key: string;
  /** ISO 8601. */
  timestamp: string;
  turns: Turn[];
}

export interface Scenario {
  id: string;
  topic: Topic;
  kind: UpdateKind;
  /** The values in the order they held; the last is current. */
  values: string[];
  /** When each value was stated (ISO 8601), in step order. */
  statedAt: string[];
  /** A question about the present: the last step's statement answers it. */
  question: string;
  /** A question about a past date, and the step that held then. */
  asOf: { question: string; at: string; step: number };
}

export interface Person {
  name: string;
  bank: string;
  sessions: Session[];
  scenarios: Scenario[];
  /** When the conversation ends: the query time of every question. */
  now: string;
}

interface Templates {
  values: readonly string[];
  first: readonly string[];
  explicit: readonly string[];
  implicit: readonly string[];
  distractor: readonly string[];
  present: readonly string[];
  past: readonly string[];
}

const CITIES = [
  'Lisbon',
  'Berlin',
  'Madrid',
  'Vienna',
  'Oslo',
  'Dublin',
  'Prague',
  'Warsaw',
  'Helsinki',
  'Zurich',
  'Athens',
  'Toronto',
  'Denver',
  'Seattle',
  'Melbourne',
  'Osaka',
];
const COMPANIES = [
  'Acme Robotics',
  'Northwind Bank',
  'Bluefin Labs',
  'Cobalt Health',
  'Granite Insurance',
  'Juniper Games',
  'Lumen Energy',
  'Maple Logistics',
  'Orchid Pharma',
  'Quartz Media',
  'Redwood Analytics',
  'Summit Foods',
];
const MANAGERS = [
  'Priya',
  'Tomasz',
  'Ingrid',
  'Kwame',
  'Yuki',
  'Rafael',
  'Helena',
  'Dmitri',
  'Amara',
  'Lucas',
  'Sofia',
  'Omar',
];
const FOODS = [
  'sushi',
  'ramen',
  'tacos',
  'lasagna',
  'pho',
  'falafel',
  'paella',
  'dumplings',
  'curry',
  'pizza',
  'risotto',
  'bibimbap',
];
const DESTINATIONS = [
  'Iceland',
  'Peru',
  'Japan',
  'Morocco',
  'Norway',
  'Vietnam',
  'Portugal',
  'Kenya',
  'Chile',
  'Croatia',
  'Scotland',
  'New Zealand',
];

const TEMPLATES: Record<Topic, Templates> = {
  places: {
    values: CITIES,
    first: ['I live in {v}.', "I've been living in {v} for a few years now.", 'My flat in {v} is tiny but I love it.'],
    explicit: [
      'I moved to {v} last month.',
      "Big news: I've relocated to {v}.",
      "I don't live in {old} anymore, I moved to {v}.",
    ],
    implicit: [
      'Still unpacking boxes in my new place in {v}.',
      'The commute from my new apartment in {v} is so much shorter.',
      'Getting used to the weather here in {v} since the move.',
    ],
    distractor: [
      'I still miss the food in {old}.',
      'Saw a documentary about {old} last night, it brought back memories.',
      'An old neighbour from {old} called me today.',
    ],
    present: ['Where does {p} live?', 'Which city does {p} live in?'],
    past: ['Where did {p} live in {date}?'],
  },
  jobs: {
    values: COMPANIES,
    first: ['I work at {v}.', "I'm an engineer at {v}.", 'Work at {v} has been really busy.'],
    explicit: [
      'I started a new job at {v} this week.',
      'I left {old} and joined {v}.',
      'I accepted the offer from {v}, I start on Monday.',
    ],
    implicit: [
      'My first week at {v} went well.',
      'My new team at {v} is really friendly.',
      'The onboarding at {v} took the whole week.',
    ],
    distractor: [
      'Ran into my old boss from {old} today.',
      '{old} just announced layoffs, glad I got out.',
      'I found my old {old} badge in a drawer.',
    ],
    present: ['Where does {p} work?', 'Which company does {p} work for?'],
    past: ['Where did {p} work in {date}?'],
  },
  people: {
    values: MANAGERS,
    first: ['My manager is {v}.', '{v}, my manager, approved my leave.', 'My manager {v} is very supportive.'],
    explicit: [
      'I have a new manager now: {v}.',
      '{old} left the company, {v} is my manager now.',
      'After the reorg I report to {v}.',
    ],
    implicit: [
      'Had my first one-on-one with {v}, who took over the team.',
      '{v} ran our team meeting today since taking over the team.',
      '{v} signed off on my project plan, first time working for {v}.',
    ],
    distractor: [
      'Had coffee with {old}, my old manager.',
      '{old} messaged me about the project we did together.',
      'I still use the planning template {old} taught me.',
    ],
    present: ["Who is {p}'s manager?", 'Who does {p} report to?'],
    past: ["Who was {p}'s manager in {date}?"],
  },
  preferences: {
    values: FOODS,
    first: ['My favourite food is {v}.', 'I could eat {v} every day.', 'Nothing beats a good plate of {v}.'],
    explicit: [
      "I'm over {old}, my favourite food these days is {v}.",
      'My new favourite food is {v}.',
      'I used to love {old}, but now {v} is my favourite.',
    ],
    implicit: [
      "I've been ordering {v} every single night lately, I can't get enough.",
      'Found a great place for {v}, I go there three times a week now.',
      'I learned to make {v} at home and now I cook it all the time.',
    ],
    distractor: [
      'Walked past a {old} place today and thought of the old days.',
      'My sister made {old} yesterday, it was fine.',
      'There was {old} at the office party.',
    ],
    present: ["What is {p}'s favourite food?", 'What food does {p} like best?'],
    past: ["What was {p}'s favourite food in {date}?"],
  },
  plans: {
    values: DESTINATIONS,
    first: [
      "I'm planning a trip to {v} for my next holiday.",
      'Booked flights to {v} for the holiday.',
      'My next vacation is going to be in {v}.',
    ],
    explicit: [
      'Change of plans: the holiday is in {v} now, not {old}.',
      'I cancelled {old}, we are going to {v} instead.',
      "We switched our vacation to {v}, it's all booked.",
    ],
    implicit: [
      'Just bought a guidebook on {v} for the holiday.',
      'Reading up on hiking trails in {v} before the trip.',
      'Got my visa sorted for the trip to {v}.',
    ],
    distractor: [
      'A friend just got back from {old} and showed me photos.',
      'There was a show about {old} on TV tonight.',
      'I saw a cheap flight to {old} today, funny timing.',
    ],
    present: ['Where is {p} going on holiday?', "Where is {p}'s next vacation?"],
    past: ['Where was {p} planning to go on holiday in {date}?'],
  },
};

const PEOPLE = [
  'Alice',
  'Bruno',
  'Chiara',
  'Dev',
  'Elena',
  'Farid',
  'Greta',
  'Hugo',
  'Isla',
  'Jonas',
  'Keiko',
  'Liam',
  'Mira',
  'Nikhil',
  'Olga',
  'Pablo',
  'Quinn',
  'Rosa',
  'Sven',
  'Tara',
  'Umar',
  'Vera',
  'Wen',
  'Ximena',
  'Yusuf',
  'Zoe',
  'Anton',
  'Bea',
  'Cyrus',
  'Dalia',
  'Emil',
  'Fatima',
  'Gustav',
  'Hana',
  'Ivan',
  'Jade',
  'Kofi',
  'Lena',
  'Mateo',
  'Nadia',
  'Oskar',
  'Petra',
  'Rahul',
  'Selin',
  'Theo',
  'Ursula',
  'Viktor',
  'Wanda',
];
const FRIENDS = ['Sam', 'Robin', 'Alex', 'Jordan', 'Casey', 'Morgan'];

/** Small talk: neither states nor names a scenario's value. */
const PERSON_SMALL_TALK = [
  'I finally fixed the leaky tap in the bathroom.',
  'Went for a long run this morning, legs are sore.',
  'I started reading a mystery novel, it is gripping.',
  'My phone screen cracked again.',
  'I watched the football match last night, what a finish.',
  'Trying to drink more water this month.',
  'The neighbours are renovating, the drilling never stops.',
  'I signed up for a pottery class.',
  'My cat knocked a plant off the shelf.',
  'I need a haircut badly.',
  'Spent the weekend cleaning out the garage.',
  'I bought a new pair of hiking boots.',
  'Been sleeping badly, too much coffee maybe.',
  'My cousin had a baby girl.',
  'I am learning to play the guitar, slowly.',
  'The printer jammed five times today.',
];
const FRIEND_SMALL_TALK = [
  'How have you been?',
  'Good to hear from you!',
  'Ha, that sounds like you.',
  'Any plans for the weekend?',
  'I have been so busy with my kids lately.',
  'Did you see the weather forecast?',
  'We should catch up properly soon.',
  'That is wonderful news.',
  'Oh no, that sounds annoying.',
  'Tell me more!',
];

const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const DAY = 86_400_000;
/** The first session of every conversation. */
const START = Date.UTC(2023, 0, 9, 18, 0);
const SESSIONS = 10;
const SESSION_GAP_DAYS = 60;

/** mulberry32: a small seeded generator, so the same seed gives the same scenarios on every machine. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)]!;
}

/** `count` distinct values of `list`, in a random order. */
function distinct<T>(random: () => number, list: readonly T[], count: number): T[] {
  const copy = [...list];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, count);
}

function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? '');
}

/** "March 2023". */
function monthYear(ms: number): string {
  const d = new Date(ms);
  return `${MONTH_NAMES[d.getUTCMonth()]!} ${d.getUTCFullYear()}`;
}

/**
 * The people of the benchmark, `scenarios` scenarios in all (five per person, one per topic; rounded up to a whole
 * person), for `seed`. Kinds of update rotate so that each is a third of the scenarios; a quarter of them update twice.
 */
export function generatePeople(scenarios: number, seed: number): Person[] {
  const random = seededRandom(seed);
  const count = Math.ceil(scenarios / TOPICS.length);
  if (count > PEOPLE.length) throw new Error(`at most ${PEOPLE.length * TOPICS.length} scenarios`);
  const people: Person[] = [];
  let serial = 0;
  for (let p = 0; p < count; p++) {
    const name = PEOPLE[p]!;
    const friend = pick(random, FRIENDS);
    const times = Array.from({ length: SESSIONS }, (_, s) => START + (s * SESSION_GAP_DAYS + p) * DAY);
    const sessions: Session[] = times.map((t, s) => ({
      key: `session_${s + 1}`,
      timestamp: new Date(t).toISOString(),
      turns: [],
    }));
    const scenariosOfPerson: Scenario[] = [];
    for (const topic of TOPICS) {
      const t = TEMPLATES[topic];
      const kind = UPDATE_KINDS[serial % UPDATE_KINDS.length]!;
      const id = `u${String(serial).padStart(3, '0')}`;
      serial++;
      const steps = random() < 0.25 ? 3 : 2;
      const values = distinct(random, t.values, steps);
      // Each step in its own session, in order; the distractor after the last step, leaving the last session free.
      const last = kind === 'distractor' ? SESSIONS - 2 : SESSIONS - 1;
      const at = distinct(
        random,
        Array.from({ length: last }, (_, i) => i),
        steps,
      ).sort((a, b) => a - b);
      const statedAt: string[] = [];
      // A different wording for each update, so a second update is never a copy of the first.
      const updates = distinct(random, kind === 'implicit' ? t.implicit : t.explicit, steps - 1);
      values.forEach((value, step) => {
        const session = sessions[at[step]!]!;
        const old = values[step - 1] ?? '';
        const template = step === 0 ? pick(random, t.first) : updates[step - 1]!;
        session.turns.push({ content: `${name}: ${fill(template, { v: value, old })}`, key: `${id}:${step}` });
        statedAt.push(session.timestamp);
      });
      if (kind === 'distractor') {
        const after = at[steps - 1]! + 1 + Math.floor(random() * (SESSIONS - 1 - at[steps - 1]!));
        const old = values[Math.floor(random() * (steps - 1))]!;
        sessions[after]!.turns.push({
          content: `${name}: ${fill(pick(random, t.distractor), { old })}`,
          key: `${id}:d`,
        });
      }
      // A date in the middle of a stale value's time: the month after it was stated, before the next statement.
      const step = Math.floor(random() * (steps - 1));
      const pastMs = (Date.parse(statedAt[step]!) + Date.parse(statedAt[step + 1]!)) / 2;
      scenariosOfPerson.push({
        id,
        topic,
        kind,
        values,
        statedAt,
        question: fill(pick(random, t.present), { p: name }),
        asOf: {
          question: fill(pick(random, t.past), { p: name, date: monthYear(pastMs) }),
          at: new Date(pastMs).toISOString(),
          step,
        },
      });
    }
    for (const session of sessions) {
      const talk: Turn[] = [];
      const turns = 3 + Math.floor(random() * 3);
      for (let i = 0; i < turns; i++) {
        talk.push({ content: `${friend}: ${pick(random, FRIEND_SMALL_TALK)}` });
        talk.push({ content: `${name}: ${pick(random, PERSON_SMALL_TALK)}` });
      }
      // The statements sit among the small talk, each after a friend's turn.
      for (const statement of session.turns) talk.splice(1 + 2 * Math.floor(random() * turns), 0, statement);
      session.turns = talk;
    }
    const lastSession = sessions[sessions.length - 1]!;
    people.push({
      name,
      bank: `updates-${name.toLowerCase()}`,
      sessions,
      scenarios: scenariosOfPerson,
      now: new Date(Date.parse(lastSession.timestamp) + DAY).toISOString(),
    });
  }
  return people;
}
