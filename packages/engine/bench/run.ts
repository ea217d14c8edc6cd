import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalEmbedder } from '../src/embeddings/local.js';
import { spawnEngineProcess } from '../src/process.js';
import { benchModelDir, benchModelDtype } from './local-model.js';
import { bestModelRate, derivedMemory, loadLocomoText } from './locomo-text.js';
import { memoryText, queryText, rng } from './synthetic.js';
import { JsonClient } from './http-json.js';
import { retainTurnsInSessions } from './locomo-retain.js';
import { machineTicks, rssMiB, threadCpuSeconds } from './process-stats.js';
import { ms, percentile } from './stats.js';

/**
 * `npm run bench`: the quality-bar figures, measured through the engine's public HTTP API on the embedded
 * database with the local model. The engine runs in its own process (`mnemos serve`), as it does for users, so the
 * client's work (HTTP, JSON parsing) is not charged to the engine's event loop. Options: --memories N (bank size for
 * recall, default 10000), --mixed-seconds S (mixed-load duration, default 60), --large N (also fill to N memories and
 * report RSS; e.g. 100000), --locomo-turns N (LoCoMo turns retained for the throughput against the model alone,
 * default 640).
 *
 * Single retain, retain throughput and recall run on real text: LoCoMo's turns as memories (a bank larger than the
 * data set gets derived memories, locomo-text.ts) and its questions as queries.
 */

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const BANK_SIZE = Number(args.get('memories') ?? 10_000);
const MIXED_SECONDS = Number(args.get('mixed-seconds') ?? 60);
const LARGE = Number(args.get('large') ?? 0);
const LOCOMO_TURNS = Number(args.get('locomo-turns') ?? 640);

const model = benchModelDir();

const http = new JsonClient(64);
const post = (url: string, body: unknown) => http.post(url, body);

function line(name: string, value: string, bar: string, ok: boolean | undefined) {
  const verdict = ok === undefined ? '' : ok ? 'PASS' : 'FAIL';
  console.log(`${name.padEnd(50)} ${value.padEnd(28)} ${bar.padEnd(26)} ${verdict}`);
}

async function count(base: string, bank: string): Promise<number> {
  const r = await fetch(`${base}/${bank}/memories?limit=0`);
  return ((await r.json()) as { total: number }).total;
}

async function main() {
  const home = mkdtempSync(join(tmpdir(), 'mnemos-bench-'));
  const engineEnv = {
    MNEMOS_HOME: home,
    MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: model,
    MNEMOS_API_PORT: '0',
    MNEMOS_API_HOST: '127.0.0.1',
  };
  let engine = await spawnEngineProcess(engineEnv);
  // The floor: the engine's model, in its precision, embedding the query alone in this process while the engine is idle.
  const dtype = benchModelDtype();
  const floorModel = await createLocalEmbedder({ model, cacheDir: join(home, 'models'), dtype, log: () => undefined });
  let base = `${engine.url}/v1/default/banks`;
  const locomo = loadLocomoText();
  const r = rng(42);
  let counter = 0;
  console.log(
    `Mnemos engine benchmark (embedded PGlite, local ${model.split('/').pop()} ${dtype}, ${process.arch}, node ${process.version})\n`,
  );
  try {
    // Warm up the model and the database.
    for (let i = 0; i < 20; i++) await post(`${base}/warm/memories`, { content: memoryText(r, counter++) });

    // Single retain latency, one LoCoMo turn at a time.
    const single: number[] = [];
    for (let i = 0; i < 100; i++) {
      const t = performance.now();
      const a = await post(`${base}/single/memories`, { content: locomo.turns[i % locomo.turns.length]! });
      counter++;
      single.push(performance.now() - t);
      if (a.status !== 200) throw new Error(`retain failed: ${JSON.stringify(a.json)}`);
    }
    const singleP50 = percentile(single, 50);
    line('Single retain latency p50 (LoCoMo turns)', ms(singleP50), '<= 25 ms', singleP50 <= 25);

    // Retain throughput on short synthetic memories: batches of 32, two requests in flight.
    const batches = 40;
    const t0 = performance.now();
    const inflight: Array<Promise<unknown>> = [];
    for (let b = 0; b < batches; b++) {
      const items = Array.from({ length: 32 }, () => ({ content: memoryText(r, counter++) }));
      inflight.push(post(`${base}/throughput/memories`, { items }));
      if (inflight.length >= 2) await inflight.shift();
    }
    await Promise.all(inflight);
    const perSecond = (batches * 32) / ((performance.now() - t0) / 1000);
    const synthetic = `${perSecond.toFixed(0)} memories/s`;
    line('Retain throughput, synthetic (batches of 32)', synthetic, '>= 250 memories/s', perSecond >= 250);

    // Retain throughput on LoCoMo turns (a session's turns per request, 32 at most, two requests in flight), next to
    // the model alone on the same texts in its best batching, measured in this process while the engine is idle.
    const turns = locomo.turns.slice(100, 100 + LOCOMO_TURNS);
    counter += turns.length;
    const locomoRate = await retainTurnsInSessions(post, `${base}/locomo/memories`, turns);
    const alone = await bestModelRate(floorModel, turns);
    line(`Retain throughput, ${turns.length} LoCoMo turns`, `${locomoRate.toFixed(1)} memories/s`, '', undefined);
    const aloneRate = `${alone.rate.toFixed(1)} texts/s`;
    line('Model alone, same turns, best batching', aloneRate, `(batches <= ${alone.cap} tokens)`, undefined);
    const share = locomoRate / alone.rate;
    line('Retain on LoCoMo / model alone', `${(100 * share).toFixed(0)}%`, '>= 90%', share >= 0.9);

    // Fill the recall bank.
    const fillStart = performance.now();
    for (let n = 0; n < BANK_SIZE; n += 100) {
      const size = Math.min(100, BANK_SIZE - n);
      const items = Array.from({ length: size }, (_, i) => ({ content: derivedMemory(locomo.turns, n + i) }));
      counter += size;
      const a = await post(`${base}/big/memories`, { items });
      if (a.status !== 200) throw new Error(`fill failed: ${JSON.stringify(a.json)}`);
    }
    const fillSeconds = (performance.now() - fillStart) / 1000;
    console.log(`(filled ${BANK_SIZE} LoCoMo-derived memories in ${fillSeconds.toFixed(1)} s)`);

    // Recall latency against the floor: embedding the query alone. Queries are LoCoMo questions.
    const queries = Array.from({ length: 300 }, (_, i) => locomo.questions[i % locomo.questions.length]!);
    for (const q of queries.slice(0, 20)) await post(`${base}/big/memories/recall`, { query: q });
    const recallTimes: number[] = [];
    const embedTimes: number[] = [];
    for (const q of queries) {
      let t = performance.now();
      await floorModel.embed([q], 'query');
      embedTimes.push(performance.now() - t);
      t = performance.now();
      const a = await post(`${base}/big/memories/recall`, { query: q });
      recallTimes.push(performance.now() - t);
      if (a.status !== 200) throw new Error(`recall failed: ${JSON.stringify(a.json)}`);
    }
    const p50 = percentile(recallTimes, 50);
    const p95 = percentile(recallTimes, 95);
    const floor = percentile(embedTimes, 50);
    line(`Recall latency p50 (${BANK_SIZE} memories)`, ms(p50), '<= 15 ms', p50 <= 15);
    line(`Recall latency p95 (${BANK_SIZE} memories)`, ms(p95), '<= 40 ms', p95 <= 40);
    line('Query embedding alone p50 (floor)', ms(floor), '', undefined);
    line('Recall p50 / floor', `${(p50 / floor).toFixed(2)}x`, '<= 3x', p50 / floor <= 3);

    // Mixed load: 32 concurrent clients, recall and retain, for MIXED_SECONDS.
    const before = await count(base, 'big');
    const cpuBefore = threadCpuSeconds(engine.child.pid);
    const ticksBefore = machineTicks();
    const clientCpuBefore = process.cpuUsage();
    const mixedStart = performance.now();
    const deadline = performance.now() + MIXED_SECONDS * 1000;
    let errors = 0;
    const retainedIds: string[] = [];
    const mixedRecall: number[] = [];
    const client = async (c: number) => {
      const cr = rng(1000 + c);
      let i = 0;
      while (performance.now() < deadline) {
        const isRetain = i++ % 5 === 0;
        const t = performance.now();
        try {
          if (isRetain) {
            const a = await post(`${base}/big/memories`, { content: `${memoryText(cr, counter++)} [client ${c}]` });
            if (a.status !== 200) errors++;
            else retainedIds.push(...(a.json.memory_ids as string[]));
          } else {
            const a = await post(`${base}/big/memories/recall`, { query: queryText(cr) });
            if (a.status !== 200) errors++;
            mixedRecall.push(performance.now() - t);
          }
        } catch {
          errors++;
        }
      }
    };
    await Promise.all(Array.from({ length: 32 }, (_, c) => client(c)));
    // Where the CPU went: the engine's main thread, its other threads (model, database), and what was left idle.
    const mixedSeconds = (performance.now() - mixedStart) / 1000;
    const cpuAfter = threadCpuSeconds(engine.child.pid);
    const clientCpu = process.cpuUsage(clientCpuBefore);
    const ticksAfter = machineTicks();
    const idleShare = (ticksAfter.idle - ticksBefore.idle) / (ticksAfter.total - ticksBefore.total);
    // Every retained memory is distinct, so the bank must have grown by exactly as many.
    const lost = before + new Set(retainedIds).size - (await count(base, 'big'));
    const mixedP95 = percentile(mixedRecall, 95);
    line(`Mixed load, 32 clients, ${MIXED_SECONDS}s: errors`, String(errors), '0', errors === 0);
    line('Mixed load: lost memories', `${lost} of ${retainedIds.length}`, '0', lost === 0);
    // A stress figure with no latency bar: closed loops with no think time measure saturation (bench:load has the bars).
    line('Mixed load: recall p95', ms(mixedP95), '', undefined);
    line('Mixed load: recalls served', String(mixedRecall.length), '', undefined);
    line(
      'Mixed load: requests/s',
      ((mixedRecall.length + retainedIds.length) / mixedSeconds).toFixed(0),
      '',
      undefined,
    );
    line(
      'Mixed load: engine main thread busy',
      `${((100 * (cpuAfter.main - cpuBefore.main)) / mixedSeconds).toFixed(0)}%`,
      '',
      undefined,
    );
    line(
      'Mixed load: engine other threads (model, database)',
      `${((cpuAfter.others - cpuBefore.others) / mixedSeconds).toFixed(2)} cores`,
      '',
      undefined,
    );
    line('Mixed load: machine idle (all cores)', `${(100 * idleShare).toFixed(0)}%`, '', undefined);
    // The CPU budget: engine and client share the machine, so requests/s can never pass the cores' milliseconds per
    // second divided by the CPU milliseconds one request costs them both (and closed-loop latency is 32 / requests/s).
    const requests = mixedRecall.length + retainedIds.length;
    const engineMs = (1000 * (cpuAfter.main - cpuBefore.main + (cpuAfter.others - cpuBefore.others))) / requests;
    const clientMs = (clientCpu.user + clientCpu.system) / 1000 / requests;
    line('Mixed load: engine CPU per request', `${engineMs.toFixed(2)} ms`, '', undefined);
    line('Mixed load: bench client CPU per request', `${clientMs.toFixed(2)} ms`, '', undefined);
    line(
      `Mixed load: CPU ceiling (${availableParallelism()} cores busy)`,
      `${((availableParallelism() * 1000) / (engineMs + clientMs)).toFixed(0)} requests/s`,
      '',
      undefined,
    );

    line(`Engine RSS after ${counter} memories`, `${rssMiB(engine.child.pid).toFixed(0)} MiB`, '', undefined);
    if (LARGE > 0) {
      // Fill the recall bank up to LARGE memories, then recall from it (the index then holds every one).
      const largeStart = performance.now();
      for (let n = await count(base, 'big'); n < LARGE; n += 500) {
        const items = Array.from({ length: Math.min(500, LARGE - n) }, () => ({ content: memoryText(r, counter++) }));
        const a = await post(`${base}/big/memories`, { items });
        if (a.status !== 200) throw new Error(`large fill failed: ${JSON.stringify(a.json)}`);
      }
      const largeRecall: number[] = [];
      for (const q of Array.from({ length: 50 }, () => queryText(r))) {
        const t = performance.now();
        await post(`${base}/big/memories/recall`, { query: q });
        largeRecall.push(performance.now() - t);
      }
      const total = await count(base, 'big');
      console.log(`(filled to ${total} memories in ${((performance.now() - largeStart) / 1000).toFixed(0)} s)`);
      line(`Recall latency p50 (${total} memories)`, ms(percentile(largeRecall, 50)), '', undefined);
      const rss = rssMiB(engine.child.pid) / 1024;
      line(`Memory use, ${total} memories (RSS)`, `${rss.toFixed(2)} GiB`, '<= 1 GiB', rss <= 1);
      line(
        'Engine peak RSS since start (VmHWM)',
        `${(rssMiB(engine.child.pid, 'VmHWM') / 1024).toFixed(2)} GiB`,
        '',
        undefined,
      );
    }

    // Restart on the same data (the model is a local folder, so nothing downloads): time to ready, and memory once
    // the recall bank's index is loaded again.
    const memories = await count(base, 'big');
    await engine.stop();
    const restart = performance.now();
    engine = await spawnEngineProcess(engineEnv);
    const ready = performance.now() - restart;
    base = `${engine.url}/v1/default/banks`;
    line(`Start-up to ready, ${counter} memories stored`, ms(ready), '<= 10 s', ready <= 10_000);
    const first = performance.now();
    await post(`${base}/big/memories/recall`, { query: queryText(r) });
    console.log(`(first recall after the restart: ${ms(performance.now() - first)})`);
    const rssAfter = rssMiB(engine.child.pid) / 1024;
    // The bar is for 100,000 memories (--large 100000); a smaller bank gets the figure without a verdict.
    const atBar = memories >= 100_000;
    line(
      `Memory use after restart, ${memories} memories (RSS)`,
      `${rssAfter.toFixed(2)} GiB`,
      atBar ? '<= 1 GiB' : '',
      atBar ? rssAfter <= 1 : undefined,
    );
  } finally {
    http.close();
    await floorModel.close();
    await engine.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
