// `mnemos retain|recall|reflect|banks|memories` against a real engine: in-process (buffered output) for each command,
// and the real `mnemos` binary (from source) in a child process for the end-to-end path.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { remote, type RemoteCommand } from '../src/cli/remote.js';
import { table } from '../src/cli/format.js';
import type { CliIo } from '../src/cli/io.js';
import { REPO_ROOT, startTestEngine, type TestEngine } from './helpers/engine.js';
import { CLI_COMMAND } from './helpers/process.js';

let engine: TestEngine;

before(async () => {
  engine = await startTestEngine();
});
after(async () => {
  await engine?.dispose();
});

async function mnemos(
  command: RemoteCommand,
  args: string[],
  stdin = '',
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = {
    env: { MNEMOS_URL: engine.url },
    stdout: (t) => (out += t),
    stderr: (t) => (err += t),
    readStdin: () => Promise.resolve(stdin),
    columns: 100,
  };
  const code = await remote(command, args, io);
  return { code, out, err };
}

function binary(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [...CLI_COMMAND, ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, out, err }));
  });
}

test('retain from arguments and from standard input, with space, tags and metadata', async () => {
  const one = await mnemos('retain', [
    'cli-bank',
    'Erin',
    'drinks',
    'oolong',
    'tea.',
    '--tag',
    'drinks',
    '--metadata',
    'source=cli',
  ]);
  assert.equal(one.code, 0, one.err);
  assert.match(one.out, /^Retained in bank cli-bank: [0-9a-f-]{36}\n$/);
  const piped = await mnemos(
    'retain',
    ['cli-bank', '-', '--space', 'acme', '--json'],
    'Erin leads the acme data team.\n',
  );
  assert.equal(piped.code, 0, piped.err);
  const answer = JSON.parse(piped.out) as { success: boolean; memory_ids: string[] };
  assert.equal(answer.success, true);
  assert.equal(answer.memory_ids.length, 1);
});

test('recall prints a table for people and JSON for scripts', async () => {
  const people = await mnemos('recall', ['cli-bank', 'What', 'does', 'Erin', 'drink?']);
  assert.equal(people.code, 0, people.err);
  const lines = people.out.trimEnd().split('\n');
  assert.match(lines[0]!, /^SCORE\s+TYPE\s+DATE\s+ID\s+TEXT$/);
  assert.equal(lines.length, 2, 'the acme memory is in another space');
  assert.match(lines[1]!, /^\d\.\d{3}\s+raw\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+[0-9a-f]{8}\s+Erin drinks oolong tea\.$/);

  const scripted = await mnemos('recall', ['cli-bank', 'Who leads the data team?', '--space', 'acme', '--json']);
  const parsed = JSON.parse(scripted.out) as { results: Array<{ text: string; space: string }> };
  assert.deepEqual(
    parsed.results.map((r) => [r.text, r.space]),
    [['Erin leads the acme data team.', 'acme']],
  );

  const none = await mnemos('recall', ['empty-bank', 'anything']);
  assert.equal(none.out, 'No memories found.\n');

  // --min-relevance is recall's min_relevance: no result is certain, so 1 leaves none; out of range is a usage mistake.
  const sure = await mnemos('recall', ['cli-bank', 'What', 'does', 'Erin', 'drink?', '--min-relevance', '1']);
  assert.equal(sure.out, 'No memories found.\n', sure.err);
  const loose = await mnemos('recall', ['cli-bank', 'What', 'does', 'Erin', 'drink?', '--min-relevance', '0']);
  assert.match(loose.out, /Erin drinks oolong tea\./);
  const wrong = await mnemos('recall', ['cli-bank', 'tea', '--min-relevance', '2']);
  assert.equal(wrong.code, 2);
  assert.match(wrong.err, /--min-relevance must be a number from 0 to 1/);

  // --filter is recall's filter expression: the engine narrows by it and names a bad node; text that is not JSON is a
  // usage mistake caught before any call.
  const raw = await mnemos('recall', ['cli-bank', 'What', 'does', 'Erin', 'drink?', '--filter', '{"type": "raw"}']);
  assert.match(raw.out, /Erin drinks oolong tea\./, raw.err);
  const world = await mnemos('recall', ['cli-bank', 'What', 'does', 'Erin', 'drink?', '--filter', '{"type": "world"}']);
  assert.equal(world.out, 'No memories found.\n', world.err);
  const badNode = await mnemos('recall', ['cli-bank', 'tea', '--filter', '{"type": {"after": "raw"}}']);
  assert.notEqual(badNode.code, 0);
  assert.match(badNode.err, /\/filter\/type\/after/);
  const notJson = await mnemos('recall', ['cli-bank', 'tea', '--filter', '{type: raw}']);
  assert.equal(notJson.code, 2);
  assert.match(notJson.err, /--filter must be a JSON filter expression/);
});

test('banks and memories: list, get, delete', async () => {
  const banks = await mnemos('banks', []);
  assert.equal(banks.code, 0, banks.err);
  assert.match(banks.out, /^BANK\s+MEMORIES\s+LAST WRITE\s+SPACE\s+NAME\n/);
  assert.match(banks.out, /\ncli-bank\s+2\s/);
  const bankJson = JSON.parse((await mnemos('banks', ['get', 'cli-bank', '--json'])).out) as {
    bank_id: string;
    memory_count: number;
  };
  assert.equal(bankJson.memory_count, 2);

  const listed = await mnemos('memories', ['list', 'cli-bank', '--json']);
  const items = (JSON.parse(listed.out) as { items: Array<{ id: string; text: string }> }).items;
  assert.equal(items.length, 2);
  const erin = items.find((m) => m.text === 'Erin drinks oolong tea.')!;
  const filtered = await mnemos('memories', ['list', 'cli-bank', '--json', '--filter', '{"space": "acme"}']);
  const inAcme = (JSON.parse(filtered.out) as { items: Array<{ text: string }> }).items.map((m) => m.text);
  assert.deepEqual(inAcme, ['Erin leads the acme data team.'], filtered.err);
  const table = await mnemos('memories', ['list', 'cli-bank', '--space', 'default']);
  assert.match(table.out, new RegExp(`^ID\\s+TYPE\\s+SPACE\\s+DATE\\s+TEXT\\n${erin.id}\\s+raw\\s+default\\s`));
  // One memory a page: the table says how to read the next page, and --cursor reads it.
  const first = await mnemos('memories', ['list', 'cli-bank', '--limit', '1']);
  const next = /\(1 of 2; --cursor (\S+) for the next page\)\n$/.exec(first.out);
  assert.ok(next, first.out);
  const second = await mnemos('memories', ['list', 'cli-bank', '--limit', '1', '--cursor', next[1]!]);
  assert.equal(second.code, 0, second.err);
  const pageIds = [first.out, second.out].map((out) => items.find((m) => out.includes(m.id))?.id);
  assert.deepEqual(new Set(pageIds), new Set(items.map((m) => m.id)), 'the two pages hold both memories');
  // A full page offers a next one, which may be empty: past the last memory, the list says so.
  const after = /--cursor (\S+) for the next page/.exec(second.out);
  assert.ok(after, second.out);
  assert.equal((await mnemos('memories', ['list', 'cli-bank', '--cursor', after[1]!])).out, 'No memories.\n');
  const bankPage = await mnemos('banks', ['list', '--limit', '1', '--cursor', 'not-a-cursor']);
  assert.equal(bankPage.code, 1, 'a bad cursor is refused by the engine');
  assert.match(bankPage.err, /cursor/);

  const got = await mnemos('memories', ['get', 'cli-bank', erin.id]);
  assert.match(got.out, /text\s+Erin drinks oolong tea\./);
  assert.equal((await mnemos('memories', ['delete', 'cli-bank', erin.id])).out, 'Deleted 1 memory.\n');

  const refused = await mnemos('banks', ['delete', 'cli-bank']);
  assert.equal(refused.code, 2);
  assert.match(refused.err, /--yes/);
  const deleted = await mnemos('banks', ['delete', 'cli-bank', '--yes']);
  assert.equal(deleted.code, 0, deleted.err);
  assert.match(deleted.out, /^Deleted bank cli-bank/);
});

test('retain --expires-at: memories get shows it; a malformed one is refused by the engine', async () => {
  const stored = await mnemos('retain', [
    'cli-expiry',
    'Erin',
    'rents',
    'a',
    'kayak.',
    '--expires-at',
    '2099-05-01',
    '--json',
  ]);
  assert.equal(stored.code, 0, stored.err);
  const [id] = (JSON.parse(stored.out) as { memory_ids: string[] }).memory_ids;
  const got = await mnemos('memories', ['get', 'cli-expiry', id!]);
  assert.match(got.out, /expires\s+2099-05-01 00:00/);
  const bad = await mnemos('retain', ['cli-expiry', 'Erin', 'rents', 'a', 'canoe.', '--expires-at', 'soon']);
  assert.equal(bad.code, 1);
  assert.match(bad.err, /expires_at/);
});

test('failures: API errors exit 1 with the detail and code, usage mistakes exit 2', async () => {
  const missing = await mnemos('memories', ['get', 'cli-bank', '00000000-0000-4000-8000-000000000000']);
  assert.equal(missing.code, 1);
  assert.match(missing.err, /\[memory_not_found, HTTP 404\]/);
  const reflect = await mnemos('reflect', ['cli-bank', 'What does Erin drink?', '--json']);
  assert.equal(reflect.code, 1);
  assert.equal(
    (JSON.parse(reflect.err) as { error: { code: string; status: number } }).error.code,
    'llm_not_configured',
  );
  for (const args of [
    ['recall'],
    ['recall', 'b'],
    ['recall', 'b', 'q', '--budget', 'huge'],
    ['recall', 'b', 'q', '--nope'],
  ]) {
    const [command, ...rest] = args as [RemoteCommand, ...string[]];
    const wrong = await mnemos(command, rest);
    assert.equal(wrong.code, 2, args.join(' '));
    assert.match(wrong.err, /run mnemos help/);
  }
});

test('tables cut the last column to the width', () => {
  const out = table(['A', 'TEXT'], [['x', 'word '.repeat(40)]], 30);
  assert.ok(out.split('\n').every((l) => l.length <= 30));
  assert.match(out, /…\n$/);
});

test('the mnemos binary: MNEMOS_URL, --json, help and unknown commands', async () => {
  const stored = await binary(['retain', 'bin-bank', 'Frank', 'plays', 'the', 'cello.', '--json'], {
    MNEMOS_URL: engine.url,
  });
  assert.equal(stored.code, 0, stored.err);
  assert.equal((JSON.parse(stored.out) as { items_count: number }).items_count, 1);
  const recalled = await binary(['recall', 'bin-bank', 'instrument', '--url', engine.url], {});
  assert.equal(recalled.code, 0, recalled.err);
  assert.match(recalled.out, /Frank plays the cello\./);
  const help = await binary(['help'], {});
  assert.equal(help.code, 0);
  assert.match(help.out, /recall <bank> <query\.\.\.>/);
  const unknown = await binary(['frobnicate'], {});
  assert.equal(unknown.code, 2);
  const down = await binary(['banks'], { MNEMOS_URL: 'http://127.0.0.1:1' });
  assert.equal(down.code, 1);
  assert.match(down.err, /connection_error/);
});

test('export writes the bank as NDJSON and import reads it into another bank, numbering failed lines', async () => {
  await mnemos('retain', ['cli-export', 'Export me please.']);
  await mnemos('retain', ['cli-export', 'Export me too.']);
  const exported = await mnemos('export', ['cli-export']);
  assert.equal(exported.code, 0, exported.err);
  const lines = exported.out.split('\n').filter((l) => l !== '');
  assert.deepEqual(lines.map((l) => (JSON.parse(l) as { text: string }).text).sort(), [
    'Export me please.',
    'Export me too.',
  ]);
  const copied = lines.map((l) => JSON.stringify({ ...(JSON.parse(l) as object), id: undefined }));
  const imported = await mnemos('import', ['cli-import'], [...copied, '{"text": 7}'].join('\n'));
  assert.equal(imported.code, 1, 'a failed line makes the exit code 1');
  assert.match(imported.out, /Imported 2, skipped 0 already there, 1 failed/);
  assert.match(imported.err, /^line 3: text must be non-empty text/m);
  const again = await mnemos('import', ['cli-import', '--json'], copied.join('\n'));
  assert.equal(again.code, 0);
  assert.deepEqual(JSON.parse(again.out), { imported: 0, skipped: 2, failed: [] });
});
