import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnEngineProcess, type EngineProcess } from '../src/process.js';
import { JsonClient } from './http-json.js';
import { benchModelDir } from './local-model.js';
import { derivedMemory, loadLocomoText, type LocomoText } from './locomo-text.js';
import { numberOption, parseBenchOptions, recordedSettings } from './options.js';
import { PARTS, residentByPart, type Part } from './smaps.js';

/**
 * The engine's resident memory, by part: the compiled engine (as users run it) on an empty home after a few retains
 * and recalls, and with `--fill N`, after filling one bank with N memories of LoCoMo text through HTTP retains, then
 * again after a restart and the recalls that load that bank's in-memory copy. `--home DIR` keeps the filled home for
 * the next run (a bank that holds memories already is not filled again), so two revisions can be compared on one fill;
 * `--cli PATH` runs another checkout's compiled CLI (`<checkout>/packages/engine/dist/cli.js`) instead of this one's.
 */
const USAGE =
  'usage: npm run bench:footprint -- [--fill N] [--home DIR] [--cli PATH] [--json FILE] [--env KEY=VALUE] ' +
  '(build first: npx tsc -b)';
const options = parseBenchOptions(process.argv.slice(2), ['fill', 'home', 'cli', 'json'], USAGE);
const FILL = numberOption(options, 'fill', 0, 0);
/** Texts per retain request in the warm-up and the fill, as an agent sends a conversation's turns. */
const ITEMS_PER_RETAIN = 32;
/** Recalls after the warm-up retains, and after a restart (the first of them loads the bank). */
const RECALLS = 20;
/** Time for the engine to finish what the requests started (statistics, collections) before it is measured. */
const SETTLE_MS = 3_000;
const FILL_BANK = 'footprint';

interface Measurement {
  rss_mib: number;
  peak_rss_mib: number;
  parts_mib: Record<Part, number>;
}

const otherCli = options.values.get('cli');
const COMPILED_CLI =
  otherCli === undefined ? resolve(fileURLToPath(new URL('.', import.meta.url)), '../dist/cli.js') : resolve(otherCli);

async function startEngine(env: Record<string, string>): Promise<EngineProcess> {
  if (!existsSync(COMPILED_CLI)) throw new Error(`${COMPILED_CLI} is missing: run npx tsc -b first; ${USAGE}`);
  return spawnEngineProcess(env, COMPILED_CLI);
}

async function post(http: JsonClient, url: string, body: unknown): Promise<Record<string, unknown>> {
  const answer = await http.post(url, body);
  if (answer.status !== 200) throw new Error(`POST ${url} answered ${answer.status}: ${JSON.stringify(answer.json)}`);
  return answer.json;
}

async function recallSome(http: JsonClient, engine: EngineProcess, bank: string, questions: readonly string[]) {
  for (let i = 0; i < RECALLS; i++) {
    await post(http, `${engine.url}/v1/default/banks/${bank}/memories/recall`, { query: questions[i]! });
  }
}

async function measure(engine: EngineProcess): Promise<Measurement> {
  await new Promise((settled) => setTimeout(settled, SETTLE_MS));
  const { rss, peak, parts } = residentByPart(engine.child.pid ?? 0);
  return { rss_mib: rss, peak_rss_mib: peak, parts_mib: parts };
}

/** An empty engine after two retain requests and a few recalls: what every engine costs before it holds anything. */
async function measureEmpty(env: Record<string, string>, text: LocomoText): Promise<Measurement> {
  const home = mkdtempSync(join(tmpdir(), 'mnemos-bench-footprint-'));
  try {
    const engine = await startEngine({ ...env, MNEMOS_HOME: home });
    const http = new JsonClient(1);
    try {
      const bank = `${engine.url}/v1/default/banks/warm-up/memories`;
      for (let i = 0; i < 2 * ITEMS_PER_RETAIN; i += ITEMS_PER_RETAIN) {
        await post(http, bank, { items: text.turns.slice(i, i + ITEMS_PER_RETAIN).map((content) => ({ content })) });
      }
      await recallSome(http, engine, 'warm-up', text.questions);
      return await measure(engine);
    } finally {
      http.close();
      await engine.stop();
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

async function storedIn(http: JsonClient, engine: EngineProcess): Promise<number> {
  const answer = await http.get(`${engine.url}/v1/default/banks/${FILL_BANK}/memories?limit=0`);
  return answer.status === 200 ? Number(answer.json.total) : 0;
}

/**
 * Fills the bank with `FILL` memories and measures the engine that did it; a bank that holds memories already is left
 * as it is (no measurement: that engine filled nothing).
 */
async function fill(
  env: Record<string, string>,
  text: LocomoText,
): Promise<{ stored: number; measured: Measurement | undefined }> {
  const engine = await startEngine(env);
  const http = new JsonClient(1);
  try {
    const already = await storedIn(http, engine);
    if (already > 0) {
      console.log(`the bank already holds ${already} memories: not filled again`);
      return { stored: already, measured: undefined };
    }
    const base = `${engine.url}/v1/default/banks/${FILL_BANK}/memories`;
    for (let k0 = 0; k0 < FILL; k0 += ITEMS_PER_RETAIN) {
      const items = [];
      for (let k = k0; k < Math.min(FILL, k0 + ITEMS_PER_RETAIN); k++) {
        items.push({ content: derivedMemory(text.turns, k) });
      }
      await post(http, base, { items });
      if (k0 % (ITEMS_PER_RETAIN * 50) === 0) process.stdout.write(`\r  filled ${k0} of ${FILL}`);
    }
    process.stdout.write(`\r  filled ${FILL} of ${FILL}\n`);
    return { measured: await measure(engine), stored: await storedIn(http, engine) };
  } finally {
    http.close();
    await engine.stop();
  }
}

/** A restarted engine after recalls of the filled bank (the first loads its in-memory copy). */
async function measureLoaded(env: Record<string, string>, text: LocomoText): Promise<Measurement> {
  const engine = await startEngine(env);
  const http = new JsonClient(1);
  try {
    await recallSome(http, engine, FILL_BANK, text.questions);
    return await measure(engine);
  } finally {
    http.close();
    await engine.stop();
  }
}

function table(columns: Record<string, Measurement>): string {
  const names = Object.keys(columns);
  const row = (label: string, values: number[]) => `| ${label} | ${values.map((v) => v.toFixed(1)).join(' | ')} |`;
  const all = Object.values(columns);
  return [
    `| part (MiB) | ${names.join(' | ')} |`,
    `| --- |${names.map(() => ' ---: |').join('')}`,
    ...PARTS.map((p) =>
      row(
        p,
        all.map((m) => m.parts_mib[p]),
      ),
    ),
    row(
      '**RSS (VmRSS)**',
      all.map((m) => m.rss_mib),
    ),
    row(
      'peak RSS (VmHWM)',
      all.map((m) => m.peak_rss_mib),
    ),
  ].join('\n');
}

async function main() {
  const text = loadLocomoText();
  const env: Record<string, string> = {
    MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: benchModelDir(),
    MNEMOS_API_PORT: '0',
    MNEMOS_API_HOST: '127.0.0.1',
    MNEMOS_API_LOG_LEVEL: 'warn',
    ...options.env,
  };
  const columns: Record<string, Measurement> = { empty: await measureEmpty(env, text) };
  let stored: number | undefined;
  if (FILL > 0) {
    const keptHome = options.values.get('home');
    const home = keptHome === undefined ? mkdtempSync(join(tmpdir(), 'mnemos-bench-footprint-')) : resolve(keptHome);
    mkdirSync(home, { recursive: true });
    try {
      const filled = await fill({ ...env, MNEMOS_HOME: home }, text);
      stored = filled.stored;
      if (filled.measured) columns[`after filling ${FILL}`] = filled.measured;
      columns[`restarted, bank loaded`] = await measureLoaded({ ...env, MNEMOS_HOME: home }, text);
    } finally {
      if (keptHome === undefined) rmSync(home, { recursive: true, force: true });
    }
  }
  console.log(table(columns));
  if (stored !== undefined) console.log(`memories stored in the bank: ${stored}`);
  const json = options.values.get('json');
  if (json !== undefined) {
    const out = {
      bench: 'footprint',
      date: new Date().toISOString(),
      machine: { cores: availableParallelism(), node: process.version },
      options: { fill: FILL, cli: COMPILED_CLI, env: recordedSettings(options.env) },
      stored,
      runs: columns,
    };
    writeFileSync(resolve(json), `${JSON.stringify(out, null, 2)}\n`);
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
