// `mnemos retain|recall|reflect|banks|memories` against a real engine: in-process (buffered output) for each command,
// and the real `mnemos` binary (from source) in a child process for the end-to-end path.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { remote, type RemoteCommand } from '../src/cli/remote.js';
import { table } from '../src/cli/format.js';
import type { CliIo } from '../src/cli/io.js';
import { call, REPO_ROOT, startTestEngine, type TestEngine } from './helpers/engine.js';
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

interface CliMemory {
  id: string;
  text: string;
  tags: string[];
  state?: string;
  metadata: Record<string, unknown>;
  expires_at: string | null;
}

async function memoryJson(bank: string, id: string): Promise<CliMemory> {
  const got = await mnemos('memories', ['get', bank, id, '--json']);
  assert.equal(got.code, 0, got.err);
  return JSON.parse(got.out) as CliMemory;
}

async function retainedId(args: string[]): Promise<string> {
  const r = await mnemos('retain', [...args, '--json']);
  assert.equal(r.code, 0, r.err);
  return (JSON.parse(r.out) as { memory_ids: string[] }).memory_ids[0]!;
}

test('--metadata: k=text is a string, k:=json any JSON value; what the API refuses is a usage mistake', async () => {
  const id = await retainedId([
    'cli-meta',
    'Ann pruned the orchid.',
    '--metadata',
    'source=cli',
    '--metadata',
    'n=3',
    '--metadata',
    'count:=3',
    '--metadata',
    'flags:=["a", 2]',
    '--metadata',
    'owner:={"name": "ann", "level": 2}',
    '--metadata',
    'done:=false',
    '--metadata',
    'gone:=null',
    '--metadata',
    'note=a=b',
  ]);
  assert.deepEqual((await memoryJson('cli-meta', id)).metadata, {
    source: 'cli',
    n: '3',
    count: 3,
    flags: ['a', 2],
    owner: { name: 'ann', level: 2 },
    done: false,
    gone: null,
    note: 'a=b',
  });
  const shown = await mnemos('memories', ['get', 'cli-meta', id]);
  assert.match(shown.out, /\nmetadata\s+\{.*"count":3,"flags":\["a",2\].*\}\n/, 'the table shows metadata as JSON');

  const deep = `deep:=${'['.repeat(8)}1${']'.repeat(8)}`;
  const refused: Array<[args: string[], message: RegExp]> = [
    [['count:=abc'], /^mnemos retain: --metadata count:= takes a JSON value .*for text write count=abc/],
    [['count:='], /--metadata count:= takes a JSON value/],
    [['novalue'], /--metadata takes key=text or key:=json/],
    [['=x'], /--metadata takes key=text or key:=json/],
    [[':=1'], /--metadata takes key=text or key:=json/],
    [[deep], /--metadata: \/metadata\/deep\/0\/0\/0\/0\/0\/0\/0 nests metadata deeper than 8 levels/],
    [[`long=${'x'.repeat(10_001)}`], /--metadata: \/metadata\/long must NOT have more than 10000 characters/],
    [[`${'k'.repeat(257)}=v`], /--metadata: \/metadata\/k+ is a key of 257 characters/],
    [['big:=1e400'], /--metadata: \/metadata\/big /],
    [
      [
        `a=${'x'.repeat(9_000)}`,
        `b=${'x'.repeat(9_000)}`,
        `c=${'x'.repeat(9_000)}`,
        `d=${'x'.repeat(9_000)}`,
        `e=${'x'.repeat(9_000)}`,
        `f=${'x'.repeat(9_000)}`,
        `g=${'x'.repeat(9_000)}`,
        `h=${'x'.repeat(9_000)}`,
      ],
      /--metadata: \/metadata is \d+ bytes as JSON; metadata must be at most 65536 bytes/,
    ],
  ];
  for (const [pairs, message] of refused) {
    const r = await mnemos('retain', ['cli-meta', 'Ann waters the fern.', ...pairs.flatMap((p) => ['--metadata', p])]);
    assert.equal(r.code, 2, pairs.join(' ').slice(0, 80));
    assert.match(r.err, message);
    assert.equal(r.err.trimEnd().split('\n').length, 1, 'one line');
    assert.match(r.err, /; run mnemos help\n$/);
  }
  // The API refuses the same metadata with the same pointer.
  const api = await call<{ errors: Array<{ pointer: string; detail: string }> }>(
    engine.url,
    'POST',
    '/v1/default/banks/cli-meta/memories',
    { content: 'Ann waters the fern.', metadata: { deep: JSON.parse(deep.slice('deep:='.length)) as unknown } },
  );
  assert.equal(api.status, 400);
  assert.equal(api.body.errors[0]!.pointer, '/metadata/deep/0/0/0/0/0/0/0');
  const listed = await mnemos('memories', ['list', 'cli-meta', '--json']);
  assert.equal((JSON.parse(listed.out) as { items: unknown[] }).items.length, 1, 'nothing refused was stored');
});

test('memories update (one, by --filter, by --id), get by several ids, delete by --filter', async () => {
  const bank = 'cli-bulk';
  const orchid = await retainedId([
    bank,
    'Ann photographed an orchid.',
    '--metadata',
    'project=apollo',
    '--metadata',
    'priority:=1',
  ]);
  const tomato = await retainedId([
    bank,
    'Hail ruined the tomatoes.',
    '--metadata',
    'project=apollo',
    '--metadata',
    'priority:=3',
  ]);
  const fern = await retainedId([bank, 'Bo repotted the fern.', '--metadata', 'project=other']);

  // One memory: PATCH, each field given replaces the old value (metadata whole).
  const one = await mnemos('memories', [
    'update',
    bank,
    orchid,
    '--text',
    'Ann photographed a ghost orchid.',
    '--tag',
    'photo',
    '--metadata',
    'project=apollo',
    '--metadata',
    'priority:=5',
    '--expires-at',
    '2099-01-01',
  ]);
  assert.equal(one.code, 0, one.err);
  assert.equal(one.out, `Updated memory ${orchid}.\n`);
  const edited = await memoryJson(bank, orchid);
  assert.equal(edited.text, 'Ann photographed a ghost orchid.');
  assert.deepEqual(edited.tags, ['photo']);
  assert.deepEqual(edited.metadata, { project: 'apollo', priority: 5 });
  assert.equal(edited.expires_at, '2099-01-01T00:00:00.000Z');
  const kept = await mnemos('memories', ['update', bank, orchid, '--expires-at', 'never']);
  assert.equal(kept.code, 0, kept.err);
  assert.equal((await memoryJson(bank, orchid)).expires_at, null);

  // Several ids in one call, in the order asked; an id without a memory says so.
  const missing = '00000000-0000-4000-8000-000000000000';
  const several = await mnemos('memories', ['get', bank, tomato, missing, fern]);
  assert.equal(several.code, 0, several.err);
  const rows = several.out.trimEnd().split('\n');
  assert.match(rows[0]!, /^ID\s+TYPE\s+DATE\s+TEXT$/);
  assert.match(rows[1]!, new RegExp(`^${tomato}\\s+raw\\s+.*Hail ruined the tomatoes\\.$`));
  assert.match(rows[2]!, new RegExp(`^${missing}\\s+-\\s+-\\s+\\(not found\\)$`));
  assert.match(rows[3]!, new RegExp(`^${fern}\\s`));
  const severalJson = JSON.parse((await mnemos('memories', ['get', bank, tomato, missing, '--json'])).out) as {
    items: Array<{ id: string; found: boolean }>;
  };
  assert.deepEqual(
    severalJson.items.map((i) => [i.id, i.found]),
    [
      [tomato, true],
      [missing, false],
    ],
  );

  // By filter: JSON metadata compares as JSON (priority 5 and 3 are numbers).
  const byFilter = await mnemos('memories', [
    'update',
    bank,
    '--filter',
    '{"metadata.priority": {"gte": 3}}',
    '--metadata',
    'reviewed:=true',
    '--tag',
    'checked',
  ]);
  assert.equal(byFilter.code, 0, byFilter.err);
  assert.equal(byFilter.out, 'Updated 2 memories.\n');
  for (const id of [orchid, tomato]) {
    const m = await memoryJson(bank, id);
    assert.deepEqual([m.metadata, m.tags], [{ reviewed: true }, ['checked']]);
  }
  assert.deepEqual((await memoryJson(bank, fern)).metadata, { project: 'other' });
  const byIds = await mnemos('memories', [
    'update',
    bank,
    '--id',
    fern,
    '--id',
    tomato,
    '--state',
    'invalidated',
    '--expires-at',
    '2099-06-01',
    '--json',
  ]);
  assert.equal(byIds.code, 0, byIds.err);
  assert.equal((JSON.parse(byIds.out) as { updated_count: number }).updated_count, 2);
  assert.equal((await memoryJson(bank, fern)).expires_at, '2099-06-01T00:00:00.000Z', 'a bulk update sets the expiry');

  for (const [args, message] of [
    [['update', bank, orchid], /nothing to change/],
    [['update', bank, '--filter', '{}'], /nothing to set: give --tag, --metadata, --state or --expires-at/],
    [
      ['update', bank, orchid, '--filter', '{"type": "raw"}', '--tag', 'x'],
      /one of: a memory <id>, --filter json, or --id <id> \(repeatable\), not several/,
    ],
    [['update', bank, '--tag', 'x'], /one of: a memory <id>/],
    [['update', bank, '--filter', '{"type": "raw"}', '--text', 'x'], /edit text or context one memory at a time/],
    [['update', bank, orchid, '--state', 'gone'], /--state is valid or invalidated/],
    [['update', bank, '--filter', '{type}', '--tag', 'x'], /--filter must be a JSON filter expression/],
    [['delete', bank, '--filter', '{"metadata.reviewed": true}'], /add --yes to confirm, or --dry-run/],
    [['delete', bank, '--id', orchid], /delete takes one <id> or a --filter/],
    [['delete', bank, orchid, tomato], /takes one <id>; for several, give --id <id> for each/],
  ] as Array<[string[], RegExp]>) {
    const r = await mnemos('memories', args);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.err, message);
  }
  const badNode = await mnemos('memories', ['update', bank, '--filter', '{"type": {"after": "raw"}}', '--tag', 'x']);
  assert.equal(badNode.code, 1, 'the engine checks the expression');
  assert.match(badNode.err, /\/filter\/type\/after/);

  const dry = await mnemos('memories', ['delete', bank, '--filter', '{"metadata.reviewed": true}', '--dry-run']);
  assert.equal(dry.out, '2 memories match (dry run: nothing deleted).\n', dry.err);
  const gone = await mnemos('memories', ['delete', bank, '--filter', '{"metadata.reviewed": true}', '--yes']);
  assert.equal(gone.out, 'Deleted 2 memories.\n', gone.err);
  const left = JSON.parse((await mnemos('memories', ['list', bank, '--json'])).out) as { items: Array<{ id: string }> };
  assert.deepEqual(
    left.items.map((m) => m.id),
    [fern],
  );
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
