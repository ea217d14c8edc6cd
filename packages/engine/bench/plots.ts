import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { z } from 'zod';
import { invokedDirectly } from './entry.js';

/**
 * `npm run docs:plots`: the benchmark figures as SVG pictures. Reads the JSON the benches write (`docs/data/`:
 * `scale*.json` from `bench:scale --json`, `locomo.json` and `locomo-keyword.json` from `bench:locomo --json`,
 * `load.json` from `bench:load --json`) and writes `docs/img/*.svg` through Vega-Lite, rendered in Node without a
 * browser. A picture whose input is missing is left out and named on the console.
 */

/**
 * Published retrievers on LoCoMo (not measured here), with their source. The LoCoMo paper reports recall per category
 * and top-k for its RAG setups; this is its best retriever at turn granularity, over categories 1-4 of all ten
 * conversations (the five this repository scores are among them).
 */
export const PUBLISHED_LOCOMO = [
  {
    retriever: 'DRAGON (LoCoMo paper)',
    category: 'all',
    recallAt10: 0.7,
    source:
      'Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents", ACL 2024 (arXiv:2402.17753): ' +
      'RAG with DRAGON over dialogue turns, about 0.70 at k = 10 on categories 1-4',
  },
] as const;

const latency = z.object({ p50: z.number(), p95: z.number(), p99: z.number() });

const scaleFile = z.object({
  bench: z.literal('scale'),
  options: z.object({ banks: z.number(), env: z.record(z.string(), z.string()) }),
  runs: z.array(z.object({ memories: z.number(), recall_ms: latency })),
});

const locomoFile = z.object({
  arms: z.enum(['all', 'keyword']).optional(),
  overall: z.record(z.string(), z.number()),
  by_category: z.record(z.string(), z.record(z.string(), z.number())),
});

const loadFile = z.object({
  bench: z.literal('open-loop'),
  model_only: z.object({ requests_per_s: z.number() }),
  runs: z.array(z.object({ offered_per_s: z.number(), recall_ms: latency, retain_ms: latency })),
});

export interface PlotInputs {
  scale: Array<z.infer<typeof scaleFile> & { name: string }>;
  locomo: z.infer<typeof locomoFile> | undefined;
  keyword: z.infer<typeof locomoFile> | undefined;
  load: z.infer<typeof loadFile> | undefined;
}

function readJson<T>(file: string, schema: z.ZodType<T>): T {
  const parsed = schema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success) throw new Error(`${file} is not the bench's JSON output: ${parsed.error.message}`);
  return parsed.data;
}

export function readInputs(dataDir: string): PlotInputs {
  const optional = <T>(name: string, schema: z.ZodType<T>) => {
    const file = path.join(dataDir, name);
    return existsSync(file) ? readJson(file, schema) : undefined;
  };
  const scale = existsSync(dataDir)
    ? readdirSync(dataDir)
        .filter((f) => /^scale.*\.json$/.test(f))
        .sort()
        .map((f) => ({ ...readJson(path.join(dataDir, f), scaleFile), name: f.replace(/\.json$/, '') }))
    : [];
  return {
    scale,
    locomo: optional('locomo.json', locomoFile),
    keyword: optional('locomo-keyword.json', locomoFile),
    load: optional('load.json', loadFile),
  };
}

/** A series' name for one scale file: its bank count, and the engine settings it ran with. */
function scaleLabel(f: PlotInputs['scale'][number]): string {
  const settings = Object.entries(f.options.env).map(([k, v]) =>
    k === 'MNEMOS_API_DATABASE_URL' ? 'external Postgres' : `${k.replace(/^MNEMOS_API_/, '')}=${v}`,
  );
  return [`${f.options.banks} bank${f.options.banks === 1 ? '' : 's'}`, ...settings].join(', ');
}

const WIDTH = 560;
const HEIGHT = 300;

export function recallBySizeSpec(scale: PlotInputs['scale']): TopLevelSpec {
  const values = scale.flatMap((f) =>
    f.runs.flatMap((r) =>
      (['p50', 'p95'] as const).map((p) => ({
        memories: r.memories,
        ms: r.recall_ms[p],
        series: `${p}, ${scaleLabel(f)}`,
      })),
    ),
  );
  return {
    title: 'Recall latency by bank size (over HTTP)',
    width: WIDTH,
    height: HEIGHT,
    data: { values },
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'memories', type: 'quantitative', scale: { type: 'log' }, title: 'memories' },
      y: { field: 'ms', type: 'quantitative', title: 'recall latency (ms)' },
      color: { field: 'series', type: 'nominal', title: null, legend: { labelLimit: 400 } },
    },
  };
}

const CATEGORIES = ['multi-hop', 'temporal', 'open-domain', 'single-hop', 'all'] as const;

export function locomoSpec(
  mnemos: z.infer<typeof locomoFile> | undefined,
  keyword: z.infer<typeof locomoFile> | undefined,
): TopLevelSpec {
  const measured = (system: string, f: z.infer<typeof locomoFile> | undefined) =>
    f === undefined
      ? []
      : CATEGORIES.map((category) => ({
          category,
          system,
          recall: (category === 'all' ? f.overall : f.by_category[category])?.['10'] ?? 0,
        }));
  const values = [
    ...measured('Mnemos', mnemos),
    ...measured('BM25 alone', keyword),
    ...PUBLISHED_LOCOMO.map((p) => ({ category: p.category, system: p.retriever, recall: p.recallAt10 })),
  ];
  return {
    title: 'LoCoMo evidence recall@10 by question category',
    width: WIDTH,
    height: HEIGHT,
    data: { values },
    mark: 'bar',
    encoding: {
      x: { field: 'category', type: 'nominal', sort: [...CATEGORIES], title: null, axis: { labelAngle: 0 } },
      xOffset: { field: 'system', type: 'nominal' },
      y: { field: 'recall', type: 'quantitative', scale: { domain: [0, 1] }, title: 'recall@10' },
      color: { field: 'system', type: 'nominal', title: null, legend: { labelLimit: 400 } },
    },
  };
}

/** The open-loop capacity is the highest offered rate at which recall p95 stays within this. */
const CAPACITY_BAR_MS = 100;

export function openLoopSpec(load: z.infer<typeof loadFile>): TopLevelSpec {
  const runs = [...load.runs].sort((a, b) => a.offered_per_s - b.offered_per_s);
  const values = runs.flatMap((r) => [
    ...(['p50', 'p95', 'p99'] as const).map((p) => ({
      rate: r.offered_per_s,
      ms: r.recall_ms[p],
      series: `recall ${p}`,
    })),
    { rate: r.offered_per_s, ms: r.retain_ms.p95, series: 'retain p95' },
  ]);
  return {
    title: `Open-loop latency by offered rate (model alone: ${load.model_only.requests_per_s.toFixed(0)} requests/s)`,
    width: WIDTH,
    height: HEIGHT,
    layer: [
      {
        data: { values },
        mark: { type: 'line', point: true },
        encoding: {
          x: { field: 'rate', type: 'quantitative', title: 'offered requests/s (80% recall, 20% retain)' },
          y: { field: 'ms', type: 'quantitative', scale: { type: 'log' }, title: 'latency from scheduled send (ms)' },
          color: { field: 'series', type: 'nominal', title: null, legend: { labelLimit: 400 } },
        },
      },
      {
        data: { values: [{ rate: load.model_only.requests_per_s, label: 'model alone' }] },
        layer: [
          { mark: { type: 'rule', strokeDash: [4, 4] }, encoding: { x: { field: 'rate', type: 'quantitative' } } },
          {
            mark: { type: 'text', align: 'right', dx: -4, baseline: 'top', y: 4 },
            encoding: { x: { field: 'rate', type: 'quantitative' }, text: { field: 'label' } },
          },
        ],
      },
      {
        data: { values: [{ ms: CAPACITY_BAR_MS, label: `capacity bar: recall p95 ${CAPACITY_BAR_MS} ms` }] },
        layer: [
          { mark: { type: 'rule', strokeDash: [2, 2] }, encoding: { y: { field: 'ms', type: 'quantitative' } } },
          {
            mark: { type: 'text', align: 'left', x: 4, dy: -6 },
            encoding: { y: { field: 'ms', type: 'quantitative' }, text: { field: 'label' } },
          },
        ],
      },
    ],
  };
}

export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new View(parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Writes every picture whose input exists; answers the files written. */
export async function writePlots(dataDir: string, imgDir: string): Promise<string[]> {
  const inputs = readInputs(dataDir);
  const pictures: Array<[string, TopLevelSpec | undefined]> = [
    ['recall-latency-by-bank-size.svg', inputs.scale.length > 0 ? recallBySizeSpec(inputs.scale) : undefined],
    [
      'locomo-recall-by-category.svg',
      inputs.locomo || inputs.keyword ? locomoSpec(inputs.locomo, inputs.keyword) : undefined,
    ],
    ['open-loop-latency.svg', inputs.load ? openLoopSpec(inputs.load) : undefined],
  ];
  mkdirSync(imgDir, { recursive: true });
  const written: string[] = [];
  for (const [name, spec] of pictures) {
    if (spec === undefined) {
      console.log(`${name}: no input in ${dataDir}, left out`);
      continue;
    }
    const file = path.join(imgDir, name);
    writeFileSync(file, `${await renderSvg(spec)}\n`);
    written.push(file);
  }
  return written;
}

if (invokedDirectly(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
  writePlots(path.join(root, 'docs/data'), path.join(root, 'docs/img')).then(
    (files) => {
      for (const f of files) console.log(`wrote ${path.relative(root, f)}`);
    },
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
