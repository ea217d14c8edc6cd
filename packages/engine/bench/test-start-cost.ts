// Where a test file's fixed CPU goes: the process's CPU (main thread and its worker threads: the model's, the
// database's) before and after each step a typical engine test file takes before its first test, in one process, one
// step at a time. Run it as the test runner runs a file (with the compiled packages when the build is current):
//   node --conditions=source --import tsx --import ./scripts/compiled-sources.mjs \
//     packages/engine/bench/test-start-cost.ts [--engines 3] [--shared-model]
// Each engine start is split by the engine's own start stages (the lines Readiness logs as each stage ends). With
// --shared-model the engines get the model startTestEngine shares among a process's engines, loaded once first.
import { cpuUsage } from 'node:process';
import { parseArgs } from 'node:util';

/** CPU seconds (user + system) of this process so far, all its threads. */
function cpuSeconds(): number {
  const { user, system } = cpuUsage();
  return (user + system) / 1e6;
}

const rows: Array<[string, number]> = [];
let mark = cpuSeconds();
/** Books the CPU used since the previous mark under `label`. */
function book(label: string): void {
  const now = cpuSeconds();
  rows.push([label, now - mark]);
  mark = now;
}

rows.push(['node, tsx and the loader hooks (before this script ran)', mark]);
const { values } = parseArgs({
  options: { engines: { type: 'string', default: '2' }, 'shared-model': { type: 'boolean', default: false } },
});
const engines = Number(values.engines);

await import('node:test');
book('import node:test');
const helpers = await import('../test/helpers/engine.js');
book('import the test helpers and the engine');
const model = values['shared-model'] ? await helpers.sharedLocalModel() : undefined;
if (model !== undefined) book('load the shared model');

for (let i = 1; i <= engines; i += 1) {
  const home = helpers.tempHome();
  book(`engine ${i}: tempHome (copy the migrated database)`);
  const stageLog = {
    info(message: string) {
      const stage = /^start stage "(.+)" done/.exec(message)?.[1];
      if (stage !== undefined) book(`engine ${i}: start stage "${stage}"`);
    },
    warn: () => undefined,
    error: () => undefined,
  };
  const running = await (
    await import('../src/index.js')
  ).startEngine({ env: helpers.testEnv(home.path), log: stageLog, engine: { model } });
  book(`engine ${i}: the rest of startEngine (HTTP app ready)`);
  const answer = await helpers.call(running.url, 'POST', '/v1/default/banks/probe/memories', {
    items: [{ content: 'Ann likes green tea.' }],
  });
  if (answer.status !== 200) throw new Error(`retain answered ${answer.status}`);
  book(`engine ${i}: one retain (first request)`);
  await running.close();
  book(`engine ${i}: close`);
  home.remove();
  book(`engine ${i}: remove the home`);
}

const total = rows.reduce((sum, [, s]) => sum + s, 0);
const width = Math.max(...rows.map(([label]) => label.length));
for (const [label, seconds] of rows) console.log(`${label.padEnd(width)}  ${seconds.toFixed(2).padStart(6)} s`);
console.log(`${'total'.padEnd(width)}  ${total.toFixed(2).padStart(6)} s`);
