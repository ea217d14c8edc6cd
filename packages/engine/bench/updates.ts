/**
 * Knowledge-update benchmark: does recall answer what is true now above what was true before? Generated scenarios
 * (updates-scenarios.ts: people, places, jobs, preferences and plans, each a value stated in a conversation and later
 * replaced, explicitly, implicitly, or with a later remark naming the old value), against engines of the bench's own,
 * over the public HTTP API only.
 *
 *   npm run bench:updates
 *   npm run bench:updates -- --modes signal --scenarios 200 --seed 31 --json out.json
 *
 * Modes (each on a fresh engine):
 * - `signal`: no LLM, no supersession marked: the ranking alone.
 * - `explicit`: each new value's retain item names the memory it replaces (`supersedes`). When the API refuses the
 *   field, or stores it without closing the old memory, the mode says so and marks the old memories with
 *   `PATCH {state: "invalidated"}` instead (the stand-in), which recall leaves out.
 * - `llm`: a stand-in LLM (updates-llm.ts) extracts one fact per memory and returns the supersessions the scenario
 *   scripts; recall answers raw memories and facts.
 *
 * Metrics, over every scenario's question about the present: current@1 (a memory stating the current value ranks
 * above every memory stating an older one), stale-in-top-5 (a memory stating an older value is among the first five).
 * As-of accuracy (the first statement of the scenario answered with `as_of` at the past date is the value that held
 * then) needs `as_of` in recall: the bench probes for it and reports it unavailable until recall honours it; the
 * same questions asked without it (the date only in the words) are reported as the ranking's as-of figure.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { HttpClient, HttpError, isRecord, startOwnEngine } from './locomo.js';
import { numberOption, parseBenchOptions } from './options.js';
import { generatePeople, TOPICS, UPDATE_KINDS, type Person, type Scenario } from './updates-scenarios.js';
import { ScriptedExtraction } from './updates-llm.js';
import { runWhenInvoked } from './entry.js';

const MODES = ['signal', 'explicit', 'llm'] as const;
type Mode = (typeof MODES)[number];
/** A mode's figures are reported per row: the LLM mode gives two, over every memory and over facts alone. */
type Row = Mode | 'llm, facts only';
const USAGE = 'see the header of packages/engine/bench/updates.ts';
/** Banks retained at once; with the LLM, each waits for its sessions' extraction, so more run side by side. */
const PARALLEL_BANKS = 2;
const PARALLEL_BANKS_WITH_LLM = 10;
/** The fact types: what the `llm, facts only` figures recall. */
const FACT_TYPES = ['world', 'experience', 'opinion', 'observation', 'procedure', 'preference', 'correction'];

interface Asked {
  scenario: Scenario;
  /** The scenario keys (`id:step`, `id:d`) of the results, in rank order ('' for other memories). */
  keys: string[];
}

interface ModeResult {
  mode: Row;
  /** How the mode ran, when not as named (a stand-in, or unavailable). */
  note: string | undefined;
  present: Asked[];
  past: Asked[];
  /** Whether recall honoured `as_of`. */
  asOfAvailable: boolean;
  pastWithAsOf: Asked[];
  retainSeconds: number;
}

/** Whether the current value's statement ranks above every older one's (and is there at all). */
function currentFirst(s: Scenario, keys: readonly string[]): boolean {
  const last = s.values.length - 1;
  const current = keys.indexOf(`${s.id}:${last}`);
  if (current < 0) return false;
  for (let step = 0; step < last; step++) {
    const stale = keys.indexOf(`${s.id}:${step}`);
    if (stale >= 0 && stale < current) return false;
  }
  return true;
}

/** Whether an older value's statement is among the first `k` results. */
function staleInTop(s: Scenario, keys: readonly string[], k: number): boolean {
  const last = s.values.length - 1;
  return keys.slice(0, k).some((key) => {
    const m = /^(\w+):(\d+)$/.exec(key);
    return m !== null && m[1] === s.id && Number(m[2]) < last;
  });
}

/** Whether the scenario's first statement in the results is the step that held at the as-of date. */
function asOfRight(s: Scenario, keys: readonly string[]): boolean {
  const first = keys.find((key) => new RegExp(`^${s.id}:\\d+$`).test(key));
  return first === `${s.id}:${s.asOf.step}`;
}

function bankPath(bank: string): string {
  return `/v1/default/banks/${encodeURIComponent(bank)}`;
}

function keysOf(answer: unknown): string[] {
  if (!isRecord(answer) || !Array.isArray(answer.results)) throw new Error('recall answer has no results array');
  return answer.results.map((r: unknown) => {
    const meta = isRecord(r) && isRecord(r.metadata) ? r.metadata : {};
    return typeof meta.update_key === 'string' ? meta.update_key : '';
  });
}

async function recallKeys(
  client: HttpClient,
  p: Person,
  query: string,
  opts: { asOf?: string; types?: string[] } = {},
): Promise<string[]> {
  const body: Record<string, unknown> = { query, query_timestamp: p.now, max_tokens: 8192 };
  if (opts.asOf !== undefined) body.as_of = opts.asOf;
  if (opts.types !== undefined) body.types = opts.types;
  return keysOf(await client.post(`${bankPath(p.bank)}/memories/recall`, body));
}

async function operationDone(client: HttpClient, id: string): Promise<void> {
  for (;;) {
    const op = await client.get(`/v1/default/operations/${id}`);
    const status = isRecord(op) ? op.status : undefined;
    if (status === 'completed') return;
    if (status === 'failed') throw new Error(`operation ${id} failed: ${JSON.stringify(op)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** What a retain of one person's conversation left: each statement's memory id, by scenario key. */
type Stored = Map<string, string>;

/**
 * Retains the person's sessions in order, one call per session. `supersedes` adds the field to each new value's item;
 * `waitForExtraction` waits for each session's facts before the next session, so that a correction's extraction sees
 * the facts it replaces.
 */
async function retainPerson(
  client: HttpClient,
  p: Person,
  opts: { supersedes: boolean; waitForExtraction: boolean },
): Promise<Stored> {
  const stored: Stored = new Map();
  for (const session of p.sessions) {
    const items = session.turns.map((t) => {
      const item: Record<string, unknown> = {
        content: t.content,
        timestamp: session.timestamp,
        document_id: session.key,
        metadata: t.key === undefined ? {} : { update_key: t.key },
      };
      const m = t.key === undefined ? null : /^(\w+):(\d+)$/.exec(t.key);
      const previous = m && Number(m[2]) > 0 ? stored.get(`${m[1]}:${Number(m[2]) - 1}`) : undefined;
      if (opts.supersedes && previous !== undefined) item.supersedes = [previous];
      return item;
    });
    const answer = await client.post(`${bankPath(p.bank)}/memories`, { items });
    const ids = isRecord(answer) && Array.isArray(answer.memory_ids) ? answer.memory_ids : [];
    session.turns.forEach((t, i) => {
      const id: unknown = ids[i];
      if (t.key !== undefined && typeof id === 'string') stored.set(t.key, id);
    });
    const operation = isRecord(answer) ? answer.operation_id : undefined;
    if (opts.waitForExtraction && typeof operation === 'string') await operationDone(client, operation);
  }
  return stored;
}

/** Runs `work` over `items`, `parallel` at a time, keeping the results in order. */
async function inParallel<T, R>(items: readonly T[], parallel: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, worker));
  return out;
}

/**
 * The explicit mode's retain: with `supersedes` on each new value's item. Answers how it went: `closed` when the
 * replaced memories came back superseded, otherwise why not (and the bench then invalidates them itself).
 */
async function retainExplicit(
  client: HttpClient,
  people: readonly Person[],
): Promise<{ closed: boolean; note: string | undefined }> {
  const first = people[0]!;
  let refused: string | undefined;
  let stored: Stored[];
  try {
    stored = [await retainPerson(client, first, { supersedes: true, waitForExtraction: false })];
  } catch (error) {
    if (!(error instanceof HttpError) || error.status >= 500) throw error;
    refused = error.message;
    stored = [await retainPerson(client, first, { supersedes: false, waitForExtraction: false })];
  }
  const s = first.scenarios[0]!;
  const old = await client.get(`${bankPath(first.bank)}/memories/${stored[0]!.get(`${s.id}:0`)!}`);
  const closed = refused === undefined && isRecord(old) && (old.superseded_by ?? old.valid_to ?? null) !== null;
  const rest = people.slice(1);
  stored.push(
    ...(await inParallel(rest, PARALLEL_BANKS, (p) =>
      retainPerson(client, p, { supersedes: closed, waitForExtraction: false }),
    )),
  );
  if (closed) return { closed, note: undefined };
  // The stand-in: every statement of an older value invalidated, as a client that knows the update would do today.
  await inParallel(people, PARALLEL_BANKS, async (p) => {
    const ids = stored[people.indexOf(p)]!;
    for (const sc of p.scenarios)
      for (let step = 0; step < sc.values.length - 1; step++) {
        const id = ids.get(`${sc.id}:${step}`);
        if (id !== undefined) await client.patch(`${bankPath(p.bank)}/memories/${id}`, { state: 'invalidated' });
      }
  });
  const why = refused !== undefined ? 'refused' : 'accepted but did not close the replaced memory';
  return {
    closed,
    note: `retain's supersedes ${why}: measured with PATCH {state: "invalidated"} on the replaced memories instead`,
  };
}

/**
 * Whether recall honours `as_of`: a memory dated now must not be answered as of a year before it. A refused field
 * and an ignored one both say no.
 */
async function asOfHonoured(client: HttpClient): Promise<boolean> {
  const bank = bankPath('updates-as-of-probe');
  await client.post(`${bank}/memories`, {
    items: [{ content: 'The probe memory.', timestamp: '2025-06-01T00:00:00Z' }],
  });
  try {
    const answer = await client.post(`${bank}/memories/recall`, {
      query: 'probe memory',
      as_of: '2024-06-01T00:00:00Z',
    });
    return isRecord(answer) && Array.isArray(answer.results) && answer.results.length === 0;
  } catch (error) {
    if (error instanceof HttpError && error.status < 500) return false;
    throw error;
  } finally {
    await client.delete(bank);
  }
}

/** The questions of every scenario, asked of `client`'s banks (`types`: the memory types recalled, all when absent). */
async function ask(
  client: HttpClient,
  people: readonly Person[],
  asOfAvailable: boolean,
  types?: string[],
): Promise<Pick<ModeResult, 'present' | 'past' | 'pastWithAsOf'>> {
  const present: Asked[] = [];
  const past: Asked[] = [];
  const pastWithAsOf: Asked[] = [];
  for (const p of people)
    for (const s of p.scenarios) {
      present.push({ scenario: s, keys: await recallKeys(client, p, s.question, { types }) });
      past.push({ scenario: s, keys: await recallKeys(client, p, s.asOf.question, { types }) });
      if (asOfAvailable)
        pastWithAsOf.push({
          scenario: s,
          keys: await recallKeys(client, p, s.asOf.question, { asOf: s.asOf.at, types }),
        });
    }
  return { present, past, pastWithAsOf };
}

async function runMode(mode: Mode, people: readonly Person[]): Promise<ModeResult[]> {
  const keys = new Map<string, string>();
  for (const p of people)
    for (const s of p.sessions) for (const t of s.turns) if (t.key !== undefined) keys.set(t.content, t.key);
  const llm = mode === 'llm' ? new ScriptedExtraction(keys) : undefined;
  const llmEnv: Record<string, string> = llm
    ? {
        MNEMOS_API_LLM_PROVIDER: 'openai',
        MNEMOS_API_LLM_MODEL: 'scripted',
        MNEMOS_API_LLM_API_KEY: 'unused',
        MNEMOS_API_LLM_BASE_URL: await llm.start(),
        MNEMOS_API_LLM_CONCURRENCY: String(PARALLEL_BANKS_WITH_LLM),
      }
    : {};
  const own = await startOwnEngine('mnemos-updates-', llmEnv);
  const client = new HttpClient(own.url);
  try {
    const started = performance.now();
    let note: string | undefined;
    if (mode === 'explicit') note = (await retainExplicit(client, people)).note;
    else
      await inParallel(people, llm ? PARALLEL_BANKS_WITH_LLM : PARALLEL_BANKS, (p) =>
        retainPerson(client, p, { supersedes: false, waitForExtraction: llm !== undefined }),
      );
    const retainSeconds = (performance.now() - started) / 1000;
    if (llm) note = `the stand-in LLM returned ${llm.supersessions} supersessions`;
    const asOfAvailable = await asOfHonoured(client);
    const rows: ModeResult[] = [
      { mode, note, asOfAvailable, retainSeconds, ...(await ask(client, people, asOfAvailable)) },
    ];
    if (llm)
      rows.push({
        mode: 'llm, facts only',
        note: 'recall with types = the fact types',
        asOfAvailable,
        retainSeconds,
        ...(await ask(client, people, asOfAvailable, FACT_TYPES)),
      });
    return rows;
  } finally {
    await own.close();
    await llm?.close();
  }
}

interface Figures {
  scenarios: number;
  currentAt1: number;
  staleInTop5: number;
  asOfRanking: number;
  asOf: number | null;
}

function figures(r: ModeResult, keep: (s: Scenario) => boolean): Figures {
  const present = r.present.filter((a) => keep(a.scenario));
  const share = (list: readonly Asked[], test: (a: Asked) => boolean) =>
    list.length === 0 ? Number.NaN : list.filter(test).length / list.length;
  const past = r.past.filter((a) => keep(a.scenario));
  const withAsOf = r.pastWithAsOf.filter((a) => keep(a.scenario));
  return {
    scenarios: present.length,
    currentAt1: share(present, (a) => currentFirst(a.scenario, a.keys)),
    staleInTop5: share(present, (a) => staleInTop(a.scenario, a.keys, 5)),
    asOfRanking: share(past, (a) => asOfRight(a.scenario, a.keys)),
    asOf: r.asOfAvailable ? share(withAsOf, (a) => asOfRight(a.scenario, a.keys)) : null,
  };
}

const fmt = (n: number | null) => (n === null ? 'unavailable' : Number.isFinite(n) ? n.toFixed(3) : '-');

function report(results: readonly ModeResult[]): string {
  const lines = [
    '| mode | slice | scenarios | current@1 | stale in top 5 | as-of accuracy (as_of) | as-of, ranking alone |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const slices: Array<[string, (s: Scenario) => boolean]> = [
      ['all', () => true],
      ...UPDATE_KINDS.map((k): [string, (s: Scenario) => boolean] => [k, (s) => s.kind === k]),
      ...TOPICS.map((t): [string, (s: Scenario) => boolean] => [t, (s) => s.topic === t]),
    ];
    for (const [name, keep] of slices) {
      const f = figures(r, keep);
      lines.push(
        `| ${r.mode} | ${name} | ${f.scenarios} | ${fmt(f.currentAt1)} | ${fmt(f.staleInTop5)} | ${fmt(f.asOf)} | ${fmt(f.asOfRanking)} |`,
      );
    }
  }
  for (const r of results) {
    lines.push('', `${r.mode}: retained in ${r.retainSeconds.toFixed(1)} s${r.note ? `; ${r.note}` : ''}`);
    if (!r.asOfAvailable)
      lines.push(`${r.mode}: recall does not honour as_of (refused or ignored): as-of accuracy unavailable`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const options = parseBenchOptions(process.argv.slice(2), ['modes', 'scenarios', 'seed', 'json'], USAGE);
  if (Object.keys(options.env).length > 0) throw new Error(`--env is not taken here; ${USAGE}`);
  const modes = (options.values.get('modes') ?? MODES.join(',')).split(',').map((m) => m.trim());
  for (const m of modes)
    if (!(MODES as readonly string[]).includes(m)) throw new Error(`--modes ${m}: must be ${MODES.join(', ')}`);
  const scenarios = numberOption(options, 'scenarios', 200);
  const seed = numberOption(options, 'seed', 31, 0);
  const people = generatePeople(scenarios, seed);
  console.log(
    `Knowledge-update benchmark: ${people.length * TOPICS.length} scenarios over ${people.length} banks, seed ${seed}, modes ${modes.join(', ')}`,
  );
  const results: ModeResult[] = [];
  for (const mode of modes as Mode[]) {
    for (const r of await runMode(mode, people)) {
      results.push(r);
      const f = figures(r, () => true);
      console.log(`  ${r.mode}: current@1 ${fmt(f.currentAt1)}, stale in top 5 ${fmt(f.staleInTop5)}`);
    }
  }
  console.log('');
  console.log(report(results));
  const json = options.values.get('json');
  if (json) {
    const out = results.map((r) => ({
      mode: r.mode,
      note: r.note ?? null,
      ...figures(r, () => true),
      by_kind: Object.fromEntries(UPDATE_KINDS.map((k) => [k, figures(r, (s) => s.kind === k)])),
      by_topic: Object.fromEntries(TOPICS.map((t) => [t, figures(r, (s) => s.topic === t)])),
    }));
    writeFileSync(
      path.resolve(json),
      `${JSON.stringify({ date: new Date().toISOString(), seed, modes: out }, null, 2)}\n`,
    );
  }
}

runWhenInvoked(import.meta.url, main);
