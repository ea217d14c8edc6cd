import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { numberOption, parseBenchOptions } from './options.js';

/**
 * Where an engine's time goes, from the CPU profiles `npm run bench:load -- --cpu-prof DIR` has it write (one file
 * per thread: CPU.<date>.<pid>.<thread>.<n>.cpuprofile, thread 0 being the main one). Only the samples inside one
 * run's window count (load.ts prints it); each is charged to the first frame, from the sampled function outwards,
 * that belongs to a component below. Samples are wall-clock time the thread was busy: on a loaded machine they
 * include time the thread waited for a core, so the shares within a thread are what this tells; the CPU each thread
 * used comes from load.ts (`engine CPU ms/request by thread`).
 *
 *   node --conditions=source --import tsx packages/engine/bench/cpu-profile.ts --dir DIR --from US --to US \
 *     --requests N [--top N]
 *
 * `--top N` also lists each thread's N functions with the most self time (the sampled function itself, not its
 * callers), in ms per request: what a component's share is made of.
 */

const USAGE =
  'options: --dir DIR --from US --to US (a run profile window) --requests N (requests in that run) --top N ' +
  '(also list the N functions with the most self time per thread)';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber?: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** The components, tried in this order on each frame from the sampled function outwards. */
const COMPONENTS: ReadonlyArray<[name: string, matches: (frame: CallFrame) => boolean]> = [
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['answer serialisation (JSON)', (f) => /\/http\/responses\.ts|fast-json-stringify/.test(f.url)],
  ['answer shaping (wire)', (f) => /\/wire\/answers\.ts/.test(f.url)],
  ['request parsing (wire)', (f) => /\/wire\/input\.ts/.test(f.url)],
  // WebAssembly frames carry no module name: the JS frame that called them tells (int16-matrix.ts, or PGlite's).
  ['recall: semantic scan', (f) => /int16-matrix/.test(f.url)],
  ['recall: keyword arm', (f) => /\/vectors\/term-index\.ts|\/keywords\//.test(f.url) || f.functionName === 'matching'],
  ['recall: signals', (f) => /\/recall\/(signals|bm25|near-copy|feedback|relevance)\.ts/.test(f.url)],
  ['recall: newer above older (recency step)', (f) => /\/recall\/recency\.ts/.test(f.url)],
  ['recall: other stages', (f) => /\/recall\/|\/vectors\//.test(f.url)],
  ['body codec (crypto/: encryption at rest, or the plaintext codec)', (f) => /\/crypto\//.test(f.url)],
  ['retain', (f) => /\/memory\//.test(f.url)],
  ['thread messages (database, model)', (f) => /\/util\/thread\.ts|\/db\/|\/embeddings\//.test(f.url)],
  ['request validation', (f) => /ajv|http-input|\/validation\.js/.test(f.url)],
  ['HTTP (fastify, node:http)', (f) => /fastify|node:_http|node:net|node:internal\/streams|\/http\//.test(f.url)],
  ['metrics and logging', (f) => /prom-client|pino|\/metrics\.ts|\/log\.ts/.test(f.url)],
  ['embedded Postgres (PGlite)', (f) => /pglite/.test(f.url)],
  ['the model (onnxruntime)', (f) => /onnxruntime/.test(f.url)],
  ['the model (tokenizer, pooling)', (f) => /@huggingface\/transformers/.test(f.url)],
];

interface Attribution {
  /** Busy sampled microseconds per component. */
  components: Map<string, number>;
  /** Busy sampled microseconds per sampled function (`name file:line`). */
  functions: Map<string, number>;
}

/** Where the busy samples inside [from, to] go, by component and by sampled function. */
function attribute(profile: CpuProfile, from: number, to: number): Attribution {
  const byId = new Map(profile.nodes.map((n) => [n.id, n] as const));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const componentOf = new Map<number, string>();
  const component = (leaf: number): string => {
    const known = componentOf.get(leaf);
    if (known !== undefined) return known;
    let found = 'other (event loop, Node internals)';
    for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)!.callFrame;
      const match = COMPONENTS.find(([, matches]) => matches(frame));
      if (match) {
        found = match[0];
        break;
      }
    }
    componentOf.set(leaf, found);
    return found;
  };
  const components = new Map<string, number>();
  const functions = new Map<string, number>();
  const add = (into: Map<string, number>, key: string, us: number) => into.set(key, (into.get(key) ?? 0) + us);
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]!;
    const leaf = profile.samples[i]!;
    const frame = byId.get(leaf)!.callFrame;
    if (t < from || t > to || frame.functionName === '(idle)') continue;
    // A sample stands for the time until the next one.
    const us = profile.timeDeltas[i + 1] ?? 0;
    add(components, component(leaf), us);
    add(functions, functionLabel(frame), us);
  }
  return { components, functions };
}

/** A sampled function as `--top` lists it: its name and where it is defined (the file's last two path parts). */
function functionLabel(frame: CallFrame): string {
  const file = frame.url.split('/').slice(-2).join('/');
  const line = frame.lineNumber !== undefined && frame.lineNumber >= 0 ? `:${frame.lineNumber + 1}` : '';
  return `${frame.functionName || '(anonymous)'}${file ? ` ${file}${line}` : ''}`;
}

/** Worker threads have no names: the component that fills most of a thread's samples says which one it is. */
function threadRole(thread: string | undefined, times: ReadonlyMap<string, number>): string {
  if (thread === '0') return 'main';
  const [top] = [...times].sort((a, b) => b[1] - a[1])[0] ?? ['idle'];
  if (top.startsWith('embedded Postgres')) return 'database';
  if (top.startsWith('the model')) return 'model';
  return `mostly ${top}`;
}

function main(): void {
  const options = parseBenchOptions(process.argv.slice(2), ['dir', 'from', 'to', 'requests', 'top'], USAGE);
  const top = numberOption(options, 'top', 0, 0);
  const dir = options.values.get('dir');
  if (dir === undefined) throw new Error(`--dir is missing; ${USAGE}`);
  const from = numberOption(options, 'from', NaN);
  const to = numberOption(options, 'to', NaN);
  const requests = numberOption(options, 'requests', NaN);
  if ([from, to, requests].some(Number.isNaN)) throw new Error(`--from, --to and --requests are needed; ${USAGE}`);
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length === 0) throw new Error(`${dir} holds no .cpuprofile files; run bench:load with --cpu-prof ${dir}`);
  for (const file of files.sort()) {
    const thread = file.split('.')[4];
    const { components: times, functions } = attribute(
      JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile,
      from,
      to,
    );
    const busy = [...times.values()].reduce((a, b) => a + b, 0);
    if (busy === 0) continue;
    console.log(
      `\nthread ${thread} (${threadRole(thread, times)}): ${(busy / 1000 / requests).toFixed(2)} ms/request sampled`,
    );
    for (const [name, us] of [...times].sort((a, b) => b[1] - a[1])) {
      console.log(`  ${((100 * us) / busy).toFixed(1).padStart(5)}%  ${name}`);
    }
    if (top === 0) continue;
    console.log(`  functions with the most self time (ms/request sampled):`);
    for (const [name, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      console.log(
        `  ${(us / 1000 / requests).toFixed(3).padStart(7)}  ${((100 * us) / busy).toFixed(1).padStart(5)}%  ${name}`,
      );
    }
  }
}

try {
  main();
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
