// Durability of the job queue: the engine runs in a child process and is killed (SIGKILL) while an extraction job is
// in flight; after a restart on the same data folder the queue resumes, and every job completes exactly once.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { call, REPO_ROOT, tempHome, testEnv } from './helpers/engine.js';
import { startFakeLlm, type FakeLlm } from './helpers/fake-llm.js';
import { CLI_COMMAND, PROCESS_LIMIT_MS } from './helpers/process.js';
import { waitUntilReady } from '../src/index.js';

const home = tempHome('mnemos-restart-');
let fake: FakeLlm | undefined;
let child: ChildProcess | undefined;

after(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await fake?.stop();
  home.remove();
});

function startChild(env: Record<string, string>): Promise<{ proc: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...CLI_COMMAND, 'serve'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let listening = false;
    const timer = setTimeout(() => reject(new Error(`engine did not start: ${out}`)), PROCESS_LIMIT_MS);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m && !listening) {
        // The engine listens before it is ready; the test's calls need it ready.
        listening = true;
        waitUntilReady(m[1]!, PROCESS_LIMIT_MS).then(() => {
          clearTimeout(timer);
          resolve({ proc, url: m[1]! });
        }, reject);
      }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`engine exited (${code}): ${out}`));
    });
  });
}

async function waitFor(predicate: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await predicate())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('a crash mid-job resumes after restart without duplicate facts', async () => {
  fake = await startFakeLlm();
  const env = testEnv(home.path, {
    MNEMOS_API_LLM_PROVIDER: 'openai',
    MNEMOS_API_LLM_MODEL: 'fake-model',
    MNEMOS_API_LLM_API_KEY: 'k',
    MNEMOS_API_LLM_BASE_URL: fake.openaiBaseUrl,
    MNEMOS_API_LLM_CONCURRENCY: '1',
    MNEMOS_API_LLM_TIMEOUT_MS: '60000',
  });
  let running = await startChild(env);
  child = running.proc;
  // The first extraction answers; the next one hangs, and the engine dies while it is in flight.
  fake.next(
    {
      kind: 'content',
      content: {
        facts: [
          { text: 'Quinn paints murals.', type: 'world', occurred_at: null, entities: ['Quinn'], supersedes: [] },
        ],
      },
    },
    'extract',
  );
  fake.always = { purpose: 'extract', behaviour: { kind: 'hang', ms: 120_000 } };
  const r = await call<{ memory_ids: string[]; operation_id: string }>(
    running.url,
    'POST',
    '/v1/default/banks/crash/memories',
    {
      items: [
        { content: 'Quinn paints murals.' },
        { content: 'Rosa teaches chemistry.' },
        { content: 'Sven builds kayaks.' },
      ],
    },
  );
  assert.equal(r.status, 200);
  await waitFor(() => fake!.count('extract') >= 2, 'the second extraction to start');
  child.kill('SIGKILL');
  await new Promise((res) => child!.once('exit', res));

  fake.always = undefined;
  running = await startChild(env);
  child = running.proc;
  let op: { status: string; facts_count: number; jobs: { succeeded: number } } | undefined;
  await waitFor(async () => {
    op = (await call<typeof op & object>(running.url, 'GET', `/v1/default/operations/${r.body.operation_id}`)).body;
    return op.status === 'completed' || op.status === 'failed';
  }, 'the operation to settle');
  assert.equal(op!.status, 'completed', JSON.stringify(op));
  assert.equal(op!.jobs.succeeded, 3);

  const list = await call<{ items: Array<{ type: string; source_id: string | null; text: string }> }>(
    running.url,
    'GET',
    '/v1/default/banks/crash/memories',
  );
  const facts = list.body.items.filter((m) => m.type !== 'raw');
  assert.equal(facts.length, 3, JSON.stringify(facts));
  for (const id of r.body.memory_ids)
    assert.equal(facts.filter((f) => f.source_id === id).length, 1, `one fact for ${id}`);
  child.kill('SIGTERM');
  await new Promise((res) => child!.once('exit', res));
});
