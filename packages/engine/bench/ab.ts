/**
 * `npm run bench:ab -- --base <ref> [--head <ref>]`: recall and retain latency and LoCoMo recall of two revisions,
 * measured in pairs on the same machine at the same moments.
 *
 * The base (and the head, when given; by default the working tree as it is) is checked out into a temporary git
 * worktree. Each side runs its own engine (`mnemos serve` from that revision's source, its own embedded database, the
 * local model). Both retain the same LoCoMo conversations, one bank per conversation, one call per session; then
 * every question goes to both, one after the other, the base first on even questions and the head first on odd ones;
 * then the same single retains (one LoCoMo turn per call, into a fresh bank) go to both the same way. Printed per
 * side: recall p50/p95, single-retain p50/p95 and LoCoMo recall@5/10/20 from these answers; and head/base ratios of
 * the medians with a bootstrap 95% interval over the pairs.
 *
 * Options: --conversations conv-26,conv-30 (default all), --questions N (at most N questions, default all),
 * --retains N (single retains per side, default 100), --budget, --max-tokens (as bench:locomo), --json <file>.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { spawnEngineProcess, type EngineProcess } from '../src/process.js';
import { checkoutRevision, repositoryRoot, workingTree, type Checkout } from './ab-checkout.js';
import { benchModelDir } from './local-model.js';
import {
  evidenceRecall,
  HttpClient,
  KS,
  loadConversation,
  recallOnce,
  retainConversation,
  type Conversation,
} from './locomo.js';
import { measurePair, pairedMedianRatio, type Pair, type PairedRatio } from './paired.js';
import { percentile } from './stats.js';
import { testLocomoDir } from './test-assets.js';

type Side = 'base' | 'head';
const SIDES: readonly Side[] = ['base', 'head'];
const WARM_UP_RETAINS = 5;

interface Options {
  base: string;
  head: string | undefined;
  conversations: string[] | undefined;
  questions: number;
  retains: number;
  budget: string | number | undefined;
  maxTokens: number;
  json: string | undefined;
}

function parseArgs(argv: readonly string[]): Options {
  const opts: Options = {
    base: '',
    head: undefined,
    conversations: undefined,
    questions: Number.POSITIVE_INFINITY,
    retains: 100,
    budget: undefined,
    maxTokens: 8192,
    json: undefined,
  };
  const count = (name: string, v: string): number => {
    if (!/^\d+$/.test(v) || Number(v) === 0) throw new Error(`${name} needs a whole number above 0, not ${v}`);
    return Number(v);
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === '--base') opts.base = value();
    else if (arg === '--head') opts.head = value();
    else if (arg === '--conversations')
      opts.conversations = value()
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    else if (arg === '--questions') opts.questions = count(arg, value());
    else if (arg === '--retains') opts.retains = count(arg, value());
    else if (arg === '--budget') {
      const v = value();
      opts.budget = /^\d+$/.test(v) ? Number(v) : v;
    } else if (arg === '--max-tokens') opts.maxTokens = count(arg, value());
    else if (arg === '--json') opts.json = path.resolve(value());
    else throw new Error(`unknown option ${arg}; see the header of packages/engine/bench/ab.ts`);
  }
  if (!opts.base) throw new Error('--base <git ref> is required (for example: npm run bench:ab -- --base main)');
  return opts;
}

function loadConversations(names: readonly string[] | undefined): Conversation[] {
  const dir = testLocomoDir();
  const files = readdirSync(dir)
    .filter((f) => /^conv-.*\.json$/.test(f))
    .filter((f) => !names || names.includes(path.basename(f, '.json')))
    .sort();
  if (files.length === 0) throw new Error(`no LoCoMo conversations to run in ${dir} (see --conversations)`);
  return files.map((f) => loadConversation(path.join(dir, f)));
}

interface Sides<T> {
  base: T;
  head: T;
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

interface LatencySummary {
  base: { p50: number; p95: number };
  head: { p50: number; p95: number };
  head_over_base_p50: PairedRatio;
}

function summariseLatency(pairs: readonly Pair[]): LatencySummary {
  const of = (side: Side) => {
    const values = pairs.map((p) => p[side]);
    return { p50: percentile(values, 50), p95: percentile(values, 95) };
  };
  return { base: of('base'), head: of('head'), head_over_base_p50: pairedMedianRatio(pairs) };
}

const fmtMs = (n: number) => `${n.toFixed(2)} ms`;
const fmtRatio = (r: PairedRatio) => `${r.ratio.toFixed(3)} (95% CI ${r.low.toFixed(3)}-${r.high.toFixed(3)})`;

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const conversations = loadConversations(opts.conversations);
  const questions = conversations.flatMap((conv) => conv.questions.map((q) => ({ conv, q }))).slice(0, opts.questions);
  const turns = conversations.flatMap((c) => c.sessions.flatMap((s) => s.turns.map((t) => t.content)));
  if (turns.length < opts.retains + WARM_UP_RETAINS)
    throw new Error(`--retains: at most ${turns.length - WARM_UP_RETAINS} here`);

  const root = repositoryRoot();
  const checkouts: Checkout[] = [];
  const engines: EngineProcess[] = [];
  const homes: string[] = [];
  try {
    const base = checkoutRevision(root, opts.base);
    checkouts.push(base);
    const head = opts.head === undefined ? workingTree(root) : checkoutRevision(root, opts.head);
    checkouts.push(head);
    const trees: Sides<Checkout> = { base, head };
    const start = async (side: Side): Promise<HttpClient> => {
      const home = mkdtempSync(path.join(tmpdir(), `mnemos-ab-${side}-`));
      homes.push(home);
      const env = { MNEMOS_HOME: home, MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: benchModelDir(), MNEMOS_API_PORT: '0' };
      const engine = await spawnEngineProcess({ ...env, MNEMOS_API_HOST: '127.0.0.1' }, trees[side].cli);
      engines.push(engine);
      return new HttpClient(engine.url);
    };
    const clients: Sides<HttpClient> = { base: await start('base'), head: await start('head') };
    console.log(
      `A/B: base ${base.label} (${base.commit}) against head ${head.label} (${head.commit}); ` +
        `${conversations.map((c) => c.name).join(', ')}, ${questions.length} questions, ${opts.retains} single retains`,
    );

    const bankOf = (conv: Conversation) => `ab-${conv.name}`;
    for (const [i, conv] of conversations.entries()) {
      // Paired like the rest, so neither side always retains on a machine the other has just warmed.
      await measurePair(i, (side) => timed(() => retainConversation(clients[side], bankOf(conv), conv)));
      const first = conv.questions[0];
      for (const side of SIDES) if (first) await recallOnce(clients[side], bankOf(conv), conv, first.question, opts);
    }

    const recallAt: Sides<Array<Record<number, number>>> = { base: [], head: [] };
    const recallPairs: Pair[] = [];
    for (const [i, { conv, q }] of questions.entries()) {
      recallPairs.push(
        await measurePair(i, async (side) => {
          const started = performance.now();
          const reply = await recallOnce(clients[side], bankOf(conv), conv, q.question, opts);
          const ms = performance.now() - started;
          recallAt[side].push(Object.fromEntries(KS.map((k) => [k, evidenceRecall(q.evidence, reply.diaIds, k)])));
          return ms;
        }),
      );
    }

    const retainPairs: Pair[] = [];
    for (let i = 0; i < opts.retains + WARM_UP_RETAINS; i++) {
      const body = { items: [{ content: turns[i]! }] };
      const pair = await measurePair(i, (side) =>
        timed(() => clients[side].post('/v1/default/banks/ab-single-retains/memories', body)),
      );
      if (i >= WARM_UP_RETAINS) retainPairs.push(pair);
    }

    const meanRecall = (side: Side): Record<number, number> =>
      Object.fromEntries(KS.map((k) => [k, recallAt[side].reduce((s, r) => s + (r[k] ?? 0), 0) / questions.length]));
    const locomo: Sides<Record<number, number>> = { base: meanRecall('base'), head: meanRecall('head') };
    const recall = summariseLatency(recallPairs);
    const retain = summariseLatency(retainPairs);

    const row = (name: string, base: string, head: string, ratio = '') =>
      console.log(`${name.padEnd(24)} ${base.padEnd(12)} ${head.padEnd(12)} ${ratio}`);
    console.log('');
    row('', 'base', 'head', 'head/base of the medians, paired');
    row('recall p50', fmtMs(recall.base.p50), fmtMs(recall.head.p50), fmtRatio(recall.head_over_base_p50));
    row('recall p95', fmtMs(recall.base.p95), fmtMs(recall.head.p95));
    row('single retain p50', fmtMs(retain.base.p50), fmtMs(retain.head.p50), fmtRatio(retain.head_over_base_p50));
    row('single retain p95', fmtMs(retain.base.p95), fmtMs(retain.head.p95));
    for (const k of KS) row(`LoCoMo recall@${k}`, locomo.base[k]!.toFixed(3), locomo.head[k]!.toFixed(3));

    if (opts.json) {
      const result = {
        base: { ref: base.label, commit: base.commit },
        head: { ref: head.label, commit: head.commit },
        conversations: conversations.map((c) => c.name),
        questions: questions.length,
        single_retains: retainPairs.length,
        recall_ms: recall,
        single_retain_ms: retain,
        locomo_recall: locomo,
        pairs: { recall_ms: recallPairs, single_retain_ms: retainPairs },
      };
      writeFileSync(opts.json, `${JSON.stringify(result, null, 2)}\n`);
    }
  } finally {
    for (const engine of engines) await engine.stop();
    for (const home of homes) rmSync(home, { recursive: true, force: true });
    for (const checkout of checkouts) checkout.remove();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
