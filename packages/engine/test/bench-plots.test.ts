import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { writePlots } from '../bench/plots.js';

const dir = mkdtempSync(path.join(tmpdir(), 'mnemos-plots-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const latency = (p50: number) => ({ count: 10, p50, p95: 2 * p50, p99: 3 * p50, max: 4 * p50 });
const recallAt = (r: number) => ({ '5': r - 0.1, '10': r, '20': r + 0.05 });

function writeData(data: string, files: Record<string, unknown>) {
  mkdirSync(data, { recursive: true });
  for (const [name, value] of Object.entries(files)) writeFileSync(path.join(data, name), JSON.stringify(value));
}

/** The text of every <text> element of an SVG (legend labels, titles, axis labels). */
function texts(svg: string): string[] {
  return [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!.replace(/&amp;/g, '&'));
}

test('the plot script turns the benches JSON into SVG pictures with their series', async () => {
  const data = path.join(dir, 'data');
  writeData(data, {
    'scale.json': {
      bench: 'scale',
      options: { sizes: [10000, 100000], banks: 1, env: {} },
      runs: [
        { memories: 10000, recall_ms: latency(10) },
        { memories: 100000, recall_ms: latency(30) },
      ],
    },
    'locomo.json': {
      arms: 'all',
      overall: recallAt(0.8),
      by_category: {
        'multi-hop': recallAt(0.5),
        temporal: recallAt(0.88),
        'open-domain': recallAt(0.5),
        'single-hop': recallAt(0.9),
      },
    },
    'locomo-keyword.json': {
      arms: 'keyword',
      overall: recallAt(0.6),
      by_category: {
        'multi-hop': recallAt(0.37),
        temporal: recallAt(0.8),
        'open-domain': recallAt(0.33),
        'single-hop': recallAt(0.67),
      },
    },
    'load.json': {
      bench: 'open-loop',
      model_only: { requests_per_s: 100 },
      runs: [
        { offered_per_s: 40, recall_ms: latency(12), retain_ms: latency(20) },
        { offered_per_s: 60, recall_ms: latency(30), retain_ms: latency(45) },
      ],
    },
  });
  const img = path.join(dir, 'img');
  const written = await writePlots(data, img);
  assert.deepEqual(written.map((f) => path.basename(f)).sort(), [
    'locomo-recall-by-category.svg',
    'open-loop-latency.svg',
    'recall-latency-by-bank-size.svg',
  ]);
  const svg = (name: string) => readFileSync(path.join(img, name), 'utf8');
  for (const f of written) {
    const s = readFileSync(f, 'utf8');
    assert.match(s, /^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    assert.match(s, /<\/svg>\s*$/);
  }
  const bySize = texts(svg('recall-latency-by-bank-size.svg'));
  assert.ok(bySize.includes('p50, 1 bank') && bySize.includes('p95, 1 bank'), bySize.join(' | '));
  const locomo = texts(svg('locomo-recall-by-category.svg'));
  for (const series of ['Mnemos', 'BM25 alone', 'DRAGON (LoCoMo paper)', 'multi-hop', 'all'])
    assert.ok(locomo.includes(series), `${series} in ${locomo.join(' | ')}`);
  const load = texts(svg('open-loop-latency.svg'));
  for (const series of ['recall p50', 'recall p95', 'recall p99', 'retain p95'])
    assert.ok(load.includes(series), `${series} in ${load.join(' | ')}`);
  // One line per series: a path per line mark (the rule and the axes are lines of their own kinds).
  assert.equal((svg('open-loop-latency.svg').match(/aria-roledescription="line mark"/g) ?? []).length, 4);
});

test('a picture whose input is missing is left out, and a file that is not the bench output is refused', async () => {
  const data = path.join(dir, 'partial');
  writeData(data, { 'load.json': { bench: 'open-loop', model_only: { requests_per_s: 100 }, runs: [] } });
  const written = await writePlots(data, path.join(dir, 'partial-img'));
  assert.deepEqual(
    written.map((f) => path.basename(f)),
    ['open-loop-latency.svg'],
  );
  writeData(data, { 'scale-broken.json': { bench: 'scale', runs: 'none' } });
  await assert.rejects(writePlots(data, path.join(dir, 'partial-img')), /scale-broken\.json is not the bench's JSON/);
});

test('every committed picture in docs/img is what its data in docs/data draws (run npm run docs:plots)', async () => {
  const docs = path.resolve(import.meta.dirname, '../../../docs');
  const drawn = path.join(dir, 'committed');
  const files = await writePlots(path.join(docs, 'data'), drawn);
  assert.ok(files.length > 0, 'docs/data gives at least one picture');
  for (const file of files) {
    const name = path.basename(file);
    assert.equal(
      readFileSync(path.join(docs, 'img', name), 'utf8'),
      readFileSync(file, 'utf8'),
      `docs/img/${name} differs from what docs/data draws: run npm run docs:plots and commit the picture`,
    );
  }
});
