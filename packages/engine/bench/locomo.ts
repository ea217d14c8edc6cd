/**
 * LoCoMo retrieval benchmark: runs the protocol of the data set's README.md (folder MNEMOS_TEST_LOCOMO) against a
 * real engine, over its public HTTP API only.
 *
 *   npm run bench:locomo                       # starts its own engine (fresh MNEMOS_HOME, local model)
 *   npm run bench:locomo -- --url http://...   # or MNEMOS_URL: a running engine
 *
 * Options: --data <dir> (default MNEMOS_TEST_LOCOMO), --conversations conv-26,conv-30, --budget low|mid|high|<n>,
 * --max-tokens <n> (default 8192: large enough never to cut the top 20), --json <file> (write the results as JSON),
 * --keep (do not delete the benchmark banks afterwards), --arms keyword (rank by BM25 alone instead of recall: the
 * baseline, see keyword-baseline.ts; needs the bench's own engine, so no --url).
 *
 * Retain: one bank per conversation, one POST per session whose items are the session's turns in order
 * (`content` = "Speaker: text [shares <caption>]", `timestamp` = the session's date, `document_id` = the session key,
 * `metadata` = {dia_id}). Recall: every category 1-4 question with evidence, `query_timestamp` = the last session's
 * date, no LLM. Score: evidence recall@k (the fraction of a question's evidence turns among the top k results, by
 * `metadata.dia_id`), averaged over questions, overall and per category; recall latency is measured by the client
 * around each HTTP call (so it includes HTTP and JSON), the first recall per bank being a discarded warm-up.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { KeywordBaseline } from './keyword-baseline.js';
import { testLocomoDir, testModelDir } from './test-assets.js';
import { runWhenInvoked } from './entry.js';

export const KS = [5, 10, 20] as const;
const CATEGORY_NAMES: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' };
const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

export interface Turn {
  diaId: string;
  content: string;
}

export interface Session {
  key: string;
  timestamp: string;
  turns: Turn[];
}

export interface Question {
  question: string;
  category: number;
  evidence: string[];
}

export interface Conversation {
  name: string;
  sessions: Session[];
  questions: Question[];
  /** ISO time of the last session: the query time of every question. */
  queryTimestamp: string;
}

interface Options {
  url: string | undefined;
  dataDir: string;
  conversations: string[] | undefined;
  budget: string | number | undefined;
  maxTokens: number;
  json: string | undefined;
  keep: boolean;
  arms: 'all' | 'keyword';
}

interface QuestionResult {
  conversation: string;
  category: number;
  recall: Record<number, number>;
  ms: number;
  tokens: number;
  results: number;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** "1:56 pm on 8 May, 2023" -> ISO 8601 (UTC; the dataset names no zone). */
export function parseSessionDate(s: string): string {
  const m = /^(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})$/i.exec(s.trim());
  if (!m) throw new Error(`unrecognised session date ${JSON.stringify(s)}`);
  const [, hh, mm, ampm, day, monthName, year] = m;
  const month = MONTHS.indexOf((monthName ?? '').toLowerCase());
  if (month < 0) throw new Error(`unrecognised month in ${JSON.stringify(s)}`);
  let hour = Number(hh) % 12;
  if ((ampm ?? '').toLowerCase() === 'pm') hour += 12;
  return new Date(Date.UTC(Number(year), month, Number(day), hour, Number(mm))).toISOString();
}

/** Reads one conversation file into sessions (in order) and the scored questions (categories 1-4 with evidence). */
export function loadConversation(file: string): Conversation {
  const raw: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (!isRecord(raw)) throw new Error(`${file}: not a JSON object`);
  const sessions: Session[] = [];
  for (const [key, value] of Object.entries(raw)) {
    if (!/^session_\d+$/.test(key) || !Array.isArray(value) || value.length === 0) continue;
    const date = raw[`${key}_date_time`];
    if (typeof date !== 'string') throw new Error(`${file}: ${key} has no date`);
    const turns: Turn[] = value.map((t: unknown, i: number) => {
      if (!isRecord(t) || typeof t.speaker !== 'string' || typeof t.text !== 'string' || typeof t.dia_id !== 'string') {
        throw new Error(`${file}: ${key}[${i}] is not a turn`);
      }
      const caption =
        typeof t.blip_caption === 'string' && t.blip_caption.length > 0 ? ` [shares ${t.blip_caption}]` : '';
      return { diaId: t.dia_id, content: `${t.speaker}: ${t.text}${caption}` };
    });
    sessions.push({ key, timestamp: parseSessionDate(date), turns });
  }
  sessions.sort((a, b) => Number(a.key.slice(8)) - Number(b.key.slice(8)));
  const last = sessions[sessions.length - 1];
  if (!last) throw new Error(`${file}: no sessions`);
  const questions: Question[] = [];
  const qa = Array.isArray(raw.qa) ? raw.qa : [];
  for (const q of qa) {
    if (!isRecord(q) || typeof q.question !== 'string' || typeof q.category !== 'number') continue;
    if (![1, 2, 3, 4].includes(q.category)) continue;
    const evidence = (Array.isArray(q.evidence) ? q.evidence : [])
      .flatMap((e: unknown) => String(e).split(/[;,\s]+/))
      .map((e) => e.trim())
      .filter((e) => e.length > 0);
    if (evidence.length === 0) continue;
    questions.push({ question: q.question, category: q.category, evidence });
  }
  return { name: path.basename(file, '.json'), sessions, questions, queryTimestamp: last.timestamp };
}

/** Fraction of `evidence` found among the first k `found` ids. */
export function evidenceRecall(evidence: readonly string[], found: readonly string[], k: number): number {
  const top = new Set(found.slice(0, k));
  return evidence.filter((e) => top.has(e)).length / evidence.length;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? Number.NaN;
}

export class HttpClient {
  constructor(private readonly base: string) {}

  post(pathname: string, body: unknown): Promise<unknown> {
    return this.send('POST', pathname, body);
  }

  get(pathname: string): Promise<unknown> {
    return this.send('GET', pathname, undefined);
  }

  patch(pathname: string, body: unknown): Promise<unknown> {
    return this.send('PATCH', pathname, body);
  }

  async delete(pathname: string): Promise<void> {
    const res = await fetch(`${this.base}${pathname}`, { method: 'DELETE', headers: authHeader() });
    await res.text();
    if (!res.ok && res.status !== 404) throw new Error(`DELETE ${pathname} answered ${res.status}`);
  }

  private async send(method: string, pathname: string, body: unknown): Promise<unknown> {
    const res = await fetch(`${this.base}${pathname}`, {
      method,
      headers: body === undefined ? authHeader() : { 'content-type': 'application/json', ...authHeader() },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new HttpError(method, pathname, res.status, text);
    return JSON.parse(text) as unknown;
  }
}

/** A request the engine answered with an error status. */
export class HttpError extends Error {
  constructor(
    method: string,
    pathname: string,
    readonly status: number,
    body: string,
  ) {
    super(`${method} ${pathname} answered ${status}: ${body.slice(0, 500)}`);
  }
}

function authHeader(): Record<string, string> {
  const token = process.env.MNEMOS_API_KEY ?? process.env.MNEMOS_API_AUTH_TOKEN;
  return token ? { authorization: `Bearer ${token}` } : {};
}

export interface RecallReply {
  diaIds: string[];
  tokens: number;
}

function parseRecallReply(v: unknown): RecallReply {
  if (!isRecord(v) || !Array.isArray(v.results)) throw new Error('recall answer has no results array');
  const diaIds = v.results.map((r: unknown) => {
    const meta = isRecord(r) && isRecord(r.metadata) ? r.metadata : {};
    return typeof meta.dia_id === 'string' ? meta.dia_id : '';
  });
  const usage = isRecord(v.usage) ? v.usage : {};
  return { diaIds, tokens: typeof usage.tokens === 'number' ? usage.tokens : 0 };
}

export async function retainConversation(client: HttpClient, bank: string, conv: Conversation): Promise<number> {
  let stored = 0;
  for (const session of conv.sessions) {
    const answer = await client.post(`/v1/default/banks/${encodeURIComponent(bank)}/memories`, {
      items: session.turns.map((t) => ({
        content: t.content,
        timestamp: session.timestamp,
        document_id: session.key,
        metadata: { dia_id: t.diaId },
      })),
    });
    if (isRecord(answer) && typeof answer.items_count === 'number') stored += answer.items_count;
  }
  return stored;
}

export async function recallOnce(
  client: HttpClient,
  bank: string,
  conv: Conversation,
  query: string,
  opts: Pick<Options, 'budget' | 'maxTokens'>,
): Promise<RecallReply> {
  const body: Record<string, unknown> = { query, query_timestamp: conv.queryTimestamp, max_tokens: opts.maxTokens };
  if (opts.budget !== undefined) body.budget = opts.budget;
  return parseRecallReply(await client.post(`/v1/default/banks/${encodeURIComponent(bank)}/memories/recall`, body));
}

function parseArgs(argv: string[]): Options {
  const opts: Options = {
    url: process.env.MNEMOS_URL,
    dataDir: testLocomoDir(),
    conversations: undefined,
    budget: undefined,
    maxTokens: 8192,
    json: undefined,
    keep: false,
    arms: 'all',
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    switch (arg) {
      case '--url':
        opts.url = value();
        break;
      case '--data':
        opts.dataDir = path.resolve(value());
        break;
      case '--conversations':
        opts.conversations = value()
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        break;
      case '--budget': {
        const v = value();
        opts.budget = /^\d+$/.test(v) ? Number(v) : v;
        break;
      }
      case '--max-tokens':
        opts.maxTokens = Number(value());
        break;
      case '--json':
        opts.json = path.resolve(value());
        break;
      case '--keep':
        opts.keep = true;
        break;
      case '--arms': {
        const v = value();
        if (v !== 'all' && v !== 'keyword') throw new Error(`--arms ${v}: must be all or keyword`);
        opts.arms = v;
        break;
      }
      default:
        throw new Error(`unknown option ${arg}; see the header of packages/engine/bench/locomo.ts`);
    }
  }
  return opts;
}

function fmt(n: number): string {
  return Number.isFinite(n) ? n.toFixed(3) : '-';
}

function summarise(rows: readonly QuestionResult[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const k of KS)
    out[k] = rows.length === 0 ? Number.NaN : rows.reduce((s, r) => s + (r.recall[k] ?? 0), 0) / rows.length;
  return out;
}

/** recall@k per category name, as the JSON output gives it. */
function byCategory(results: readonly QuestionResult[]): Record<string, Record<number, number>> {
  const out: Record<string, Record<number, number>> = {};
  for (const c of [1, 2, 3, 4])
    out[CATEGORY_NAMES[c] ?? String(c)] = summarise(results.filter((r) => r.category === c));
  return out;
}

export function report(results: readonly QuestionResult[], retainMs: number, memories: number): string {
  const lines: string[] = [];
  const header = `| | questions | ${KS.map((k) => `recall@${k}`).join(' | ')} |`;
  lines.push(header, `|---|---|${KS.map(() => '---').join('|')}|`);
  const row = (name: string, rows: readonly QuestionResult[]) => {
    const s = summarise(rows);
    lines.push(`| ${name} | ${rows.length} | ${KS.map((k) => fmt(s[k] ?? Number.NaN)).join(' | ')} |`);
  };
  row('all', results);
  for (const c of [1, 2, 3, 4])
    row(
      `${c} ${CATEGORY_NAMES[c] ?? ''}`,
      results.filter((r) => r.category === c),
    );
  for (const conv of [...new Set(results.map((r) => r.conversation))])
    row(
      conv,
      results.filter((r) => r.conversation === conv),
    );
  const ms = results.map((r) => r.ms).sort((a, b) => a - b);
  const meanTokens = results.reduce((s, r) => s + r.tokens, 0) / Math.max(1, results.length);
  const meanResults = results.reduce((s, r) => s + r.results, 0) / Math.max(1, results.length);
  lines.push('');
  lines.push(
    `recall latency (client, over HTTP): p50 ${fmt(percentile(ms, 50))} ms, p95 ${fmt(percentile(ms, 95))} ms`,
  );
  lines.push(`returned per query: ${meanTokens.toFixed(0)} tokens, ${meanResults.toFixed(1)} results (mean)`);
  lines.push(`retained ${memories} memories in ${(retainMs / 1000).toFixed(1)} s`);
  return lines.join('\n');
}

/**
 * The settings of an engine of a bench's own in this process: the process's environment, MNEMOS_HOME at `home`, the
 * local model, an open port on 127.0.0.1, warnings only unless MNEMOS_API_LOG_LEVEL says otherwise, and `env` on top.
 */
export function ownEngineEnv(home: string, env: Record<string, string> = {}): Record<string, string | undefined> {
  return {
    ...process.env,
    MNEMOS_HOME: home,
    MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: testModelDir(),
    MNEMOS_API_PORT: '0',
    MNEMOS_API_HOST: '127.0.0.1',
    MNEMOS_API_LOG_LEVEL: process.env.MNEMOS_API_LOG_LEVEL ?? 'warn',
    ...env,
  };
}

/**
 * An engine of the bench's own in this process (ownEngineEnv): a fresh MNEMOS_HOME (removed on close), and `env` on
 * top (an LLM's settings, for one).
 */
export async function startOwnEngine(homePrefix: string, env: Record<string, string> = {}) {
  const home = mkdtempSync(path.join(tmpdir(), homePrefix));
  const { startEngine } = await import('../src/index.js');
  const running = await startEngine({
    env: ownEngineEnv(home, env),
    log: { info: () => undefined, warn: (m) => console.warn(m), error: (m) => console.error(m) },
  });
  return {
    url: running.url,
    engine: running.engine,
    close: async () => {
      await running.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const files = readdirSync(opts.dataDir)
    .filter((f) => /^conv-.*\.json$/.test(f))
    .filter((f) => !opts.conversations || opts.conversations.includes(path.basename(f, '.json')))
    .sort();
  if (files.length === 0) throw new Error(`no conversations found in ${opts.dataDir}`);
  const conversations = files.map((f) => loadConversation(path.join(opts.dataDir, f)));

  if (opts.arms === 'keyword' && opts.url) throw new Error('--arms keyword ranks inside the bench: leave out --url');
  let url = opts.url;
  let close: (() => Promise<void>) | undefined;
  let keyword: KeywordBaseline | undefined;
  if (!url) {
    const own = await startOwnEngine('mnemos-locomo-');
    url = own.url;
    close = own.close;
    if (opts.arms === 'keyword') keyword = new KeywordBaseline(own.engine);
  }
  console.log(`LoCoMo retrieval benchmark against ${url} (${conversations.map((c) => c.name).join(', ')})`);

  const client = new HttpClient(url.replace(/\/+$/, ''));
  const run = Date.now().toString(36);
  const results: QuestionResult[] = [];
  let retainMs = 0;
  let memories = 0;
  const banks: string[] = [];
  try {
    for (const conv of conversations) {
      const bank = `locomo-${conv.name}-${run}`;
      banks.push(bank);
      const t0 = performance.now();
      memories += await retainConversation(client, bank, conv);
      retainMs += performance.now() - t0;
      const first = conv.questions[0];
      if (first) await recallOnce(client, bank, conv, first.question, opts); // warm-up, not measured
      for (const q of conv.questions) {
        const t1 = performance.now();
        const reply = keyword
          ? { diaIds: await keyword.rank('default', bank, q.question), tokens: 0 }
          : await recallOnce(client, bank, conv, q.question, opts);
        const ms = performance.now() - t1;
        const recall: Record<number, number> = {};
        for (const k of KS) recall[k] = evidenceRecall(q.evidence, reply.diaIds, k);
        results.push({
          conversation: conv.name,
          category: q.category,
          recall,
          ms,
          tokens: reply.tokens,
          results: reply.diaIds.length,
        });
      }
      const s = summarise(results.filter((r) => r.conversation === conv.name));
      console.log(`  ${conv.name}: ${conv.questions.length} questions, recall@10 ${fmt(s[10] ?? Number.NaN)}`);
    }
  } finally {
    if (!opts.keep && !close) {
      for (const bank of banks)
        await client.delete(`/v1/default/banks/${encodeURIComponent(bank)}`).catch(() => undefined);
    }
    if (close) await close();
  }

  console.log('');
  console.log(report(results, retainMs, memories));
  if (opts.json) {
    const overall = summarise(results);
    const ms = results.map((r) => r.ms).sort((a, b) => a - b);
    writeFileSync(
      opts.json,
      `${JSON.stringify({ arms: opts.arms, date: new Date().toISOString(), overall, by_category: byCategory(results), p50_ms: percentile(ms, 50), p95_ms: percentile(ms, 95), questions: results }, null, 2)}\n`,
    );
  }
}

runWhenInvoked(import.meta.url, main);
