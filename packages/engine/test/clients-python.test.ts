// Builds the Python client (clients/python) into a wheel and an sdist with no network (its standard-library build
// backend), installs each into a fresh venv, and runs the client's unittest suite with the wheel's venv against a real
// engine started here: embedded database in a fresh MNEMOS_HOME, the real local embedding model, and a fake
// OpenAI-compatible LLM server so reflect works. The Python process gets MNEMOS_URL, MNEMOS_FAKE_LLM=1 and
// MNEMOS_CLIENT_INSTALLED=1 (the suite checks it imported the installed copy, not the source tree); its unit-level
// tests (scripted local HTTP server) run in the same process.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { testModelDir } from '../bench/test-assets.js';
import { startEngine, type RunningEngine } from '../src/index.js';
import { testHomesRoot } from './helpers/homes-root.js';
import { seedEmbeddedDatabase } from './helpers/pristine-database.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const modelDir = testModelDir();
const python = process.env['PYTHON'] ?? 'python3';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** Answers every chat completion with a JSON object that cites each memory id found in the prompt. */
function fakeLlmAnswer(body: string): string {
  const ids = [...new Set(body.match(UUID) ?? [])];
  const text = ids.length > 0 ? 'According to memory, the answer is in the cited memories.' : 'Memory does not say.';
  return JSON.stringify({ answer: text, text, citations: ids, facts: [] });
}

/** A streamed answer in the OpenAI wire format: the content in pieces of 16 characters, then the finish and usage. */
function streamAnswer(res: ServerResponse, content: string): void {
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 0, model: 'fake', choices, ...extra })}\n\n`;
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (let i = 0; i < content.length; i += 16) {
    res.write(chunk([{ index: 0, delta: { content: content.slice(i, i + 16) }, finish_reason: null }]));
  }
  res.write(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]));
  res.write(chunk([], { usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 } }));
  res.end('data: [DONE]\n\n');
}

function startFakeLlm(): Promise<{ server: Server; baseUrl: string }> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (req.method !== 'POST' || !(req.url ?? '').endsWith('/chat/completions')) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'not found' } }));
        return;
      }
      const content = fakeLlmAnswer(body);
      if ((JSON.parse(body) as { stream?: unknown }).stream === true) {
        streamAnswer(res, content);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-fake',
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: 'fake',
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
          usage: {
            prompt_tokens: Math.ceil(body.length / 4),
            completion_tokens: Math.ceil(content.length / 4),
            total_tokens: Math.ceil((body.length + content.length) / 4),
          },
        }),
      );
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      resolve({ server, baseUrl: `http://127.0.0.1:${port}/v1` });
    });
  });
}

function run(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => {
      output += c.toString('utf8');
    });
    child.stderr.on('data', (c: Buffer) => {
      output += c.toString('utf8');
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      output += `\n[killed after ${timeoutMs} ms]`;
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

let home = '';
let work = '';
let venvPython = '';
let llm: { server: Server; baseUrl: string } | undefined;
let engine: RunningEngine | undefined;
/** True when the engine's LLM layer is wired (reflect answers through the fake LLM); else reflect must answer
 * 503 llm_not_configured, and the Python suite checks that instead. */
let llmWired = false;

function pythonEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1', ...extra };
  delete env['PYTHONPATH'];
  return env;
}

async function mustRun(cmd: string, args: string[], timeoutMs: number): Promise<string> {
  const { code, output } = await run(cmd, args, pythonEnv({ PIP_DISABLE_PIP_VERSION_CHECK: '1' }), timeoutMs);
  assert.equal(code, 0, `${cmd} ${args.join(' ')} failed (exit ${String(code)}):\n${output}`);
  return output;
}

before(async () => {
  home = mkdtempSync(path.join(testHomesRoot(), 'mnemos-pyclient-'));
  // The migrated database a new home gets in every engine test (see pristine-database.ts), not initdb run again.
  seedEmbeddedDatabase(home);
  work = mkdtempSync(path.join(tmpdir(), 'mnemos-pywheel-'));
  llm = await startFakeLlm();
  engine = await startEngine({
    env: {
      MNEMOS_HOME: home,
      MNEMOS_API_EMBEDDINGS_LOCAL_MODEL: modelDir,
      MNEMOS_API_PORT: '0',
      MNEMOS_API_HOST: '127.0.0.1',
      MNEMOS_API_LOG_LEVEL: 'warn',
      MNEMOS_API_LLM_PROVIDER: 'openai',
      MNEMOS_API_LLM_MODEL: 'fake',
      MNEMOS_API_LLM_API_KEY: 'test',
      MNEMOS_API_LLM_BASE_URL: llm.baseUrl,
    },
  });
  llmWired = engine.engine.features.includes('reflect');
});

after(async () => {
  await engine?.close();
  await new Promise<void>((resolve) => {
    if (llm) llm.server.close(() => resolve());
    else resolve();
  });
  if (home) rmSync(home, { recursive: true, force: true });
  if (work) rmSync(work, { recursive: true, force: true });
});

test('the Python client builds into a wheel offline and installs from it into a fresh venv', async () => {
  const dist = path.join(work, 'dist');
  const venv = path.join(work, 'venv');
  await mustRun(
    python,
    [
      '-m',
      'pip',
      'wheel',
      '--no-deps',
      '--no-build-isolation',
      '--no-index',
      '-q',
      path.join(repoRoot, 'clients/python'),
      '-w',
      dist,
    ],
    120_000,
  );
  const pyproject = readFileSync(path.join(repoRoot, 'clients/python/pyproject.toml'), 'utf8');
  const version = /^version = "([^"]+)"$/m.exec(pyproject);
  assert.ok(version, 'pyproject.toml names a version');
  const wheel = `mnemos_client-${version[1]!}-py3-none-any.whl`;
  assert.deepEqual(readdirSync(dist), [wheel]);

  // A venv without pip of its own (seconds faster); the outer pip installs into it, from the wheel only.
  await mustRun(python, ['-m', 'venv', '--without-pip', venv], 60_000);
  venvPython = path.join(venv, 'bin', 'python');
  await mustRun(
    python,
    ['-m', 'pip', '--python', venvPython, 'install', '--no-index', '--no-deps', '-q', path.join(dist, wheel)],
    120_000,
  );
  const shown = await mustRun(
    venvPython,
    [
      '-c',
      [
        'import importlib.metadata as m, mnemos_client, os',
        'print(m.version("mnemos-client"), mnemos_client.__version__)',
        'print(os.path.isfile(os.path.join(os.path.dirname(mnemos_client.__file__), "py.typed")))',
        'print(mnemos_client.__file__)',
      ].join('; '),
    ],
    60_000,
  );
  const [versions, typed, file] = shown.trim().split('\n');
  assert.equal(versions, `${version[1]!} ${version[1]!}`, 'installed metadata and __version__ agree with pyproject');
  assert.equal(typed, 'True', 'py.typed is installed (PEP 561)');
  assert.ok(file?.startsWith(venv), `imported from the venv, not the source tree: ${String(file)}`);
});

test('the Python client builds into an sdist offline that pip installs into a fresh venv, licence included', async () => {
  const dist = path.join(work, 'sdist');
  const venv = path.join(work, 'venv-sdist');
  mkdirSync(dist);
  // What a PEP 517 front end (python -m build --sdist) does: call the backend's build_sdist hook.
  const built = await mustRun(
    python,
    [
      '-c',
      'import sys; sys.path.insert(0, "clients/python/build_backend"); import mnemos_build; print(mnemos_build.build_sdist(sys.argv[1]))',
      dist,
    ],
    60_000,
  );
  const version = /^version = "([^"]+)"$/m.exec(
    readFileSync(path.join(repoRoot, 'clients/python/pyproject.toml'), 'utf8'),
  )?.[1];
  assert.ok(version, 'pyproject.toml names a version');
  assert.equal(built.trim(), `mnemos_client-${version}.tar.gz`);

  // pip builds a wheel from the sdist alone (isolated, with the sdist's own backend and no index), then installs it.
  await mustRun(python, ['-m', 'venv', '--without-pip', venv], 60_000);
  const sdistPython = path.join(venv, 'bin', 'python');
  await mustRun(
    python,
    ['-m', 'pip', '--python', sdistPython, 'install', '--no-index', '--no-deps', '-q', path.join(dist, built.trim())],
    120_000,
  );
  const shown = await mustRun(
    sdistPython,
    [
      '-c',
      [
        'import importlib.metadata as m, mnemos_client',
        'print(m.version("mnemos-client"), mnemos_client.__version__)',
        'print("Apache License" in (m.distribution("mnemos-client").read_text("LICENSE") or ""))',
        'print(mnemos_client.__file__)',
      ].join('; '),
    ],
    60_000,
  );
  const [versions, licensed, file] = shown.trim().split('\n');
  assert.equal(versions, `${version} ${version}`);
  assert.equal(licensed, 'True', 'the licence text is installed with the package');
  assert.ok(file?.startsWith(venv), `imported from the venv, not the source tree: ${String(file)}`);
});

test('the installed Python client passes its unittest suite against a live engine', async (t) => {
  assert.ok(engine, 'engine did not start');
  assert.ok(venvPython, 'the wheel was not installed (see the test before)');
  const started = Date.now();
  const args = ['-m', 'unittest', 'discover', '-s', 'clients/python/tests', '-v'];
  const { code, output } = await run(
    venvPython,
    args,
    pythonEnv({
      MNEMOS_URL: engine.url,
      MNEMOS_FAKE_LLM: llmWired ? '1' : '',
      MNEMOS_CLIENT_INSTALLED: '1',
    }),
    240_000,
  );
  const summary = output.split('\n').filter((line) => /^(Ran \d+ tests|OK|FAILED)/.test(line));
  t.diagnostic(`python process ${Date.now() - started} ms`);
  t.diagnostic(`python: ${summary.join(' ')}${llmWired ? '' : ' (engine without LLM layer: reflect checked as 503)'}`);
  assert.equal(code, 0, `python -m unittest failed (exit ${String(code)}):\n${output}`);
  assert.match(output, /\nOK/, output);
});
