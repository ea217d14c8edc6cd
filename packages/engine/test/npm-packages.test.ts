// test-runner: long (started first, so the suite does not wait for it at the end)
// The npm packages as users get them. `npm pack` packs every workspace not marked private (each one's prepack
// compiles it); the tarballs' contents are checked, then they are installed offline into one empty folder outside the
// repository, with onnxruntime-node's optional GPU download skipped as the README tells users (helpers/offline-install
// explains the lockfile). There the installed `mnemos serve` runs on the test model, `mnemos mcp` answers an MCP client
// over stdio, a TypeScript program type-checked against the shipped declarations drives that engine through
// @mnemos/client, and the AI SDK adapter runs under ai 7 (the repository's own tests run it under ai 6).
import { spawn, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MODEL_DIR, REPO_ROOT, tempHome } from './helpers/engine.js';
import { writeConsumerProject } from './helpers/offline-install.js';

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  license?: string;
  main?: string;
  types?: string;
  bin?: Record<string, string>;
  exports?: unknown;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  [field: string]: unknown;
}
interface Packed {
  name: string;
  version: string;
  filename: string;
  integrity: string;
  files: Array<{ path: string }>;
}
interface Ran {
  code: number | null;
  stdout: string;
  output: string;
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const tsc = path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const readManifest = (file: string): Manifest => JSON.parse(readFileSync(file, 'utf8')) as Manifest;

/** The workspaces that are published: every one under packages/ not marked private. */
const published = readdirSync(path.join(REPO_ROOT, 'packages'))
  .map((dir) => `packages/${dir}`)
  .filter((dir) => existsSync(path.join(REPO_ROOT, dir, 'package.json')))
  .filter((dir) => readManifest(path.join(REPO_ROOT, dir, 'package.json')).private !== true);

let work = '';
let app = '';
let packed: Array<Packed & { workspace: string; manifest: Manifest }> = [];
let installed = false;
let serve: ChildProcess | undefined;
let serveOutput = '';
let engineUrl = '';
let home: { path: string; remove(): void } | undefined;
let mcp: Client | undefined;

/**
 * The environment of the commands a user would type: none of the npm_config_* settings that npm hands to the
 * scripts it runs (`npm test` would otherwise pass on this repository's .npmrc), and no tsx loader.
 */
function userEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(npm_|NODE_OPTIONS$|ONNXRUNTIME_NODE_INSTALL$)/i.test(key)) env[key] = value;
  }
  return { ...env, npm_config_update_notifier: 'false', ...extra };
}

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = userEnv()): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let output = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
      output += c.toString('utf8');
    });
    child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, output }));
  });
}

async function mustRun(cmd: string, args: string[], cwd: string, env?: NodeJS.ProcessEnv): Promise<string> {
  const { code, stdout, output } = await run(cmd, args, cwd, env);
  assert.equal(code, 0, `${cmd} ${args.join(' ')} failed (exit ${String(code)}):\n${output}`);
  return stdout;
}

/** Every file a manifest's exports map names (under any condition). */
function exportTargets(exports: unknown): string[] {
  if (typeof exports === 'string') return [exports];
  if (typeof exports !== 'object' || exports === null) return [];
  return Object.values(exports).flatMap(exportTargets);
}

before(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'mnemos-npm-packages-'));
  app = path.join(work, 'app');
  mkdirSync(app);
  const args = ['pack', ...published.flatMap((w) => ['-w', w]), '--pack-destination', app, '--json'];
  const list = JSON.parse(await mustRun(npm, args, REPO_ROOT)) as Packed[];
  packed = list.map((p) => {
    const workspace = published.find((w) => readManifest(path.join(REPO_ROOT, w, 'package.json')).name === p.name);
    assert.ok(workspace, `${p.name} was packed from a published workspace`);
    return { ...p, workspace, manifest: readManifest(path.join(REPO_ROOT, workspace, 'package.json')) };
  });
});

after(async () => {
  await mcp?.close().catch(() => undefined);
  if (serve?.pid !== undefined && serve.exitCode === null) {
    const exited = new Promise((resolve) => serve!.once('exit', resolve));
    // npx runs the command in a child of its own: the whole process group is stopped.
    process.kill(-serve.pid, 'SIGTERM');
    await exited;
  }
  home?.remove();
  if (work) rmSync(work, { recursive: true, force: true });
});

test('every package a published package needs is published, with its licence, README and every file it names', () => {
  const names = packed.map((p) => p.name).sort();
  assert.deepEqual(names, [
    '@mnemos/client',
    '@mnemos/engine',
    '@mnemos/http-input',
    '@mnemos/integrations',
    '@mnemos/problems',
  ]);
  const licence = readFileSync(path.join(REPO_ROOT, 'LICENSE'), 'utf8');
  for (const p of packed) {
    const files = new Set(p.files.map((f) => f.path));
    assert.equal(p.version, p.manifest.version);
    assert.equal(p.manifest.license, 'Apache-2.0', `${p.name} names its licence`);
    assert.equal(readFileSync(path.join(REPO_ROOT, p.workspace, 'LICENSE'), 'utf8'), licence, `${p.name}'s LICENSE`);
    for (const needed of ['package.json', 'LICENSE', 'README.md', 'CHANGELOG.md']) {
      assert.ok(files.has(needed), `${p.name} ships ${needed}`);
    }
    const named = [
      ...exportTargets(p.manifest.exports),
      ...Object.values(p.manifest.bin ?? {}),
      ...[p.manifest.main, p.manifest.types].filter((f) => f !== undefined),
    ].map((f) => path.posix.normalize(f));
    assert.ok(named.length > 0, `${p.name} names its entry points`);
    for (const file of named) assert.ok(files.has(file), `${p.name} ships ${file}, which its manifest names`);
    const stray = [...files].filter((f) => /(^|\/)(test|bench)\/|\.tsbuildinfo$/.test(f));
    assert.deepEqual(stray, [], `${p.name} ships no tests, benches or build state`);
    for (const [dependency, range] of Object.entries({ ...p.manifest.dependencies })) {
      if (!dependency.startsWith('@mnemos/')) continue;
      const target = packed.find((q) => q.name === dependency);
      assert.ok(target, `${p.name} depends on ${dependency}, which is published too`);
      assert.equal(range, `^${target.version}`, `${p.name} asks for the version of ${dependency} packed with it`);
    }
  }
});

test('the tarballs install offline into an empty folder, every dependency and peer range satisfied', async () => {
  const registry = (await mustRun(npm, ['config', 'get', 'registry'], work)).trim();
  writeConsumerProject({
    repoRoot: REPO_ROOT,
    dir: app,
    registry,
    packed,
    // The AI SDK's current major, from the integrations package's devDependency alias.
    extra: [{ name: 'ai', range: '^7.0.0', from: 'node_modules/ai-7' }],
  });
  // The README's instruction: onnxruntime-node's install script would download GPU providers the engine never uses.
  const env = userEnv({ ONNXRUNTIME_NODE_INSTALL: 'skip' });
  await mustRun(npm, ['ci', '--offline', '--no-audit', '--no-fund'], app, env);
  for (const p of packed) {
    const at = path.join(app, 'node_modules', p.name);
    assert.equal(lstatSync(at).isSymbolicLink(), false, `${p.name} is a real copy from the tarball`);
  }
  assert.equal(readManifest(path.join(app, 'node_modules/ai/package.json')).version.split('.')[0], '7');
  // npm's own check of the installed tree: a peer range that does not take ai 7 is reported as invalid here.
  await mustRun(npm, ['ls', '--all', '--offline'], app, env);
  installed = true;
});

test('the installed mnemos serve answers /health 200 on the test model', async () => {
  assert.ok(installed, 'the tarballs were not installed (see the test before)');
  home = tempHome('mnemos-npm-packages-home-');
  const env = userEnv({
    MNEMOS_HOME: home.path,
    MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: MODEL_DIR,
    MNEMOS_API_PORT: '0',
    MNEMOS_API_HOST: '127.0.0.1',
    MNEMOS_API_LOG_LEVEL: 'info',
    MNEMOS_API_LOG_FORMAT: 'json',
  });
  const child = spawn('npx', ['--no', 'mnemos', 'serve'], { cwd: app, env, detached: true, stdio: 'pipe' });
  serve = child;
  engineUrl = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      serveOutput += chunk.toString('utf8');
      const match = /engine listening on (http:\/\/\S+)/.exec(serveOutput);
      if (match) resolve(match[1]!);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`mnemos serve exited (${code}) before listening:\n${serveOutput}`)));
  });
  let health: Response | undefined;
  for (const deadline = Date.now() + 180_000; Date.now() < deadline;) {
    health = await fetch(`${engineUrl}/health`);
    if (health.status === 200) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.equal(health?.status, 200, `the installed engine never became healthy:\n${serveOutput}`);
  assert.equal(((await health.json()) as { status: string }).status, 'healthy');
});

test('the installed mnemos mcp answers initialize over stdio and its tools reach the engine', async () => {
  assert.ok(engineUrl, 'the installed engine is not running (see the test before)');
  const transport = new StdioClientTransport({
    command: path.join(app, 'node_modules', '.bin', 'mnemos'),
    args: ['mcp'],
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', MNEMOS_URL: engineUrl },
    cwd: app,
    stderr: 'pipe',
  });
  mcp = new Client({ name: 'mnemos-npm-packages-test', version: '1.0.0' });
  await mcp.connect(transport);
  const engine = readManifest(path.join(app, 'node_modules/@mnemos/engine/package.json'));
  assert.equal(mcp.getServerVersion()?.version, engine.version);
  const stored = await mcp.callTool({ name: 'retain', arguments: { bank_id: 'mcp', content: 'Ola rides a tandem.' } });
  assert.notEqual(stored.isError, true);
  const recalled = await mcp.callTool({ name: 'recall', arguments: { bank_id: 'mcp', query: 'What does Ola ride?' } });
  const first = (recalled as CallToolResult).content[0];
  assert.ok(first?.type === 'text');
  assert.match(first.text, /Ola rides a tandem\./);
});

test('the installed mnemos gateway says in one line that the gateway is not on npm and where it runs', async () => {
  assert.ok(installed, 'the tarballs were not installed (see the tests before)');
  const { code, stdout, output } = await run(path.join(app, 'node_modules', '.bin', 'mnemos'), ['gateway'], app);
  assert.equal(code, 1, output);
  assert.equal(stdout, '');
  assert.match(output, /^mnemos gateway: [^\n]*not published to npm[^\n]*container image[^\n]*mnemos serve[^\n]*\n$/);
});

/**
 * A TypeScript program in the consumer folder, type-checked against the installed declarations and compiled, with no
 * @types packages (only the standard DOM types, fetch among them). `checkDeclarations` also checks every declaration
 * file the program loads (skipLibCheck off), not only the program's use of them.
 */
async function compile(file: string, source: string, checkDeclarations: boolean): Promise<void> {
  writeFileSync(path.join(app, file), source);
  const config = `tsconfig.${path.basename(file, '.ts')}.json`;
  writeFileSync(
    path.join(app, config),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        lib: ['es2023', 'dom'],
        types: [],
        skipLibCheck: !checkDeclarations,
      },
      files: [file],
    }),
  );
  await mustRun(process.execPath, [tsc, '-p', config], app);
}

/** The client's consumer. */
function clientProgram(baseUrl: string): string {
  return `import { Mnemos, MnemosError, type RecallResult } from '@mnemos/client';

const mnemos = new Mnemos({ baseUrl: ${JSON.stringify(baseUrl)} });
const retained = await mnemos.retain('packaged', 'Hana plays the oboe in a string quartet.');
await mnemos.retain('packaged', 'The office kitchen has a new coffee machine.');
const recalled: RecallResult = await mnemos.recall('packaged', 'Which instrument does Hana play?');
const version = await mnemos.version();
let missing = '';
try {
  await mnemos.getBank('no-such-bank');
} catch (error) {
  if (error instanceof MnemosError) missing = \`\${error.status} \${error.code}\`;
}
console.log(JSON.stringify({
  id: retained.memory_ids[0],
  top: recalled.results[0]?.id,
  version: version['version'],
  missing,
}));
`;
}

test('the installed client, type-checked against its declarations, works against the installed engine', async () => {
  assert.ok(engineUrl, 'the installed engine is not running (see the test before)');
  await compile('client-smoke.ts', clientProgram(engineUrl), true);
  const printed = await mustRun(process.execPath, ['client-smoke.js'], app);
  const result = JSON.parse(printed) as { id: string; top: string; version: unknown; missing: string };
  assert.match(result.id, /^[0-9a-f-]{36}$/);
  assert.equal(result.top, result.id, 'recall finds the memory the packaged client retained');
  assert.equal(result.version, readManifest(path.join(app, 'node_modules/@mnemos/engine/package.json')).version);
  assert.equal(result.missing, '404 bank_not_found');
});

/**
 * The AI SDK adapter's consumer under ai 7. The agent's model is the AI SDK's own mock (the LLM is the one part a
 * test may fake): it first calls the retain tool, then answers; a second call goes through the memory middleware.
 */
function aiProgram(baseUrl: string): string {
  return `import { generateText, stepCountIs, wrapLanguageModel } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { Mnemos } from '@mnemos/client';
import { mnemosMemory, mnemosTools } from '@mnemos/integrations/ai-sdk';

const client = new Mnemos({ baseUrl: ${JSON.stringify(baseUrl)} });
const bankId = 'ai-sdk-7';
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
const stop = { unified: 'stop' as const, raw: undefined };
const replies = [
  {
    content: [{ type: 'tool-call' as const, toolCallId: 'call-1', toolName: 'retain', input: JSON.stringify({ content: 'Ines keeps bees on her roof.' }) }],
    finishReason: { unified: 'tool-calls' as const, raw: undefined },
  },
  { content: [{ type: 'text' as const, text: 'Noted.' }], finishReason: stop },
  { content: [{ type: 'text' as const, text: 'Bees.' }], finishReason: stop },
];
const prompts: string[] = [];
const model = new MockLanguageModelV4({
  doGenerate: async ({ prompt }) => {
    prompts.push(JSON.stringify(prompt));
    const reply = replies.shift();
    if (reply === undefined) throw new Error('the model was called more often than scripted');
    return { ...reply, usage, warnings: [] };
  },
});

const tools = mnemosTools({ client, bankId });
const stored = await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'I keep bees on my roof.' });
const output = stored.steps[0]?.toolResults[0]?.output as { memory_ids: string[] } | undefined;
const retained = await client.getMemory(bankId, output?.memory_ids[0] ?? '');

const memoryModel = wrapLanguageModel({ model, middleware: mnemosMemory({ client, bankId }) });
const answered = await generateText({ model: memoryModel, prompt: 'What does Ines keep on her roof?' });
const memories = await client.listMemories(bankId);
console.log(JSON.stringify({
  toolAnswer: stored.text,
  retained: retained.text,
  answer: answered.text,
  lastPrompt: prompts.at(-1),
  stored: memories.items.map((m) => m.text).sort(),
}));
`;
}

test('the AI SDK adapter works under ai 7: its tools store memories, its middleware recalls and retains', async () => {
  assert.ok(engineUrl, 'the installed engine is not running (see the test before)');
  // As most projects compile (skipLibCheck on): the AI SDK's own declarations want @types/node and DOM types at once,
  // and checking them would take most of this file's time while telling nothing about the adapter.
  await compile('ai-smoke.ts', aiProgram(engineUrl), false);
  const printed = await mustRun(process.execPath, ['ai-smoke.js'], app);
  const result = JSON.parse(printed) as {
    toolAnswer: string;
    retained: string;
    answer: string;
    lastPrompt: string;
    stored: string[];
  };
  assert.equal(result.toolAnswer, 'Noted.');
  assert.equal(result.retained, 'Ines keeps bees on her roof.', 'the retain tool stored what the model asked');
  assert.equal(result.answer, 'Bees.');
  assert.match(result.lastPrompt, /Relevant memories[^"]*\\n- \[[\d-]{10}\] Ines keeps bees on her roof\./);
  assert.deepEqual(result.stored, [
    'Assistant: Bees.',
    'Ines keeps bees on her roof.',
    'User: What does Ines keep on her roof?',
  ]);
});
