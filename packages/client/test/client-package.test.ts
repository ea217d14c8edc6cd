// test-runner: long (started first, so the suite does not wait for it at the end)
// @mnemos/client as users get it: `npm pack` builds the tarball (prepack compiles dist), npm installs it offline into
// a fresh folder outside the repository, and a small TypeScript program there is type-checked against the shipped
// declarations, compiled, and run with plain Node against a real engine started by this file.
import { spawn } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { REPO_ROOT, startTestEngine, type TestEngine } from '../../engine/test/helpers/engine.js';

interface PackedFile {
  path: string;
}
interface Packed {
  name: string;
  version: string;
  filename: string;
  files: PackedFile[];
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const tsc = path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

let engine: TestEngine;
let work = '';

before(async () => {
  engine = await startTestEngine();
  work = mkdtempSync(path.join(tmpdir(), 'mnemos-npm-package-'));
});
after(async () => {
  await engine?.dispose();
  if (work) rmSync(work, { recursive: true, force: true });
});

interface Ran {
  code: number | null;
  stdout: string;
  output: string;
}

function run(cmd: string, args: string[], cwd: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, npm_config_update_notifier: 'false' };
    delete env['NODE_OPTIONS'];
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

async function mustRun(cmd: string, args: string[], cwd: string): Promise<string> {
  const { code, stdout, output } = await run(cmd, args, cwd);
  assert.equal(code, 0, `${cmd} ${args.join(' ')} failed (exit ${String(code)}):\n${output}`);
  return stdout;
}

/** The consumer's program: every line is checked by tsc against the tarball's declarations, then run. */
function smokeProgram(baseUrl: string): string {
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

test('npm pack builds a publishable tarball that installs offline and works against a live engine', async () => {
  const manifest = JSON.parse(readFileSync(path.join(REPO_ROOT, 'packages/client/package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  assert.equal(manifest.name, '@mnemos/client');

  const packArgs = ['pack', '-w', 'packages/client', '--pack-destination', work, '--json'];
  const packedJson = await mustRun(npm, packArgs, REPO_ROOT);
  const [packed] = JSON.parse(packedJson) as Packed[];
  assert.ok(packed, packedJson);
  assert.equal(packed.name, '@mnemos/client');
  assert.equal(packed.version, manifest.version);
  assert.equal(packed.filename, `mnemos-client-${manifest.version}.tgz`);
  const files = packed.files.map((f) => f.path).sort();
  for (const needed of [
    'package.json',
    'README.md',
    'CHANGELOG.md',
    'dist/index.js',
    'dist/index.d.ts',
    'dist/client.js',
    'dist/generated/types.d.ts',
  ]) {
    assert.ok(files.includes(needed), `${needed} is in the tarball: ${files.join(', ')}`);
  }
  assert.deepEqual(
    files.filter((f) => !/^(dist\/.+\.(js|d\.ts)|package\.json|README\.md|CHANGELOG\.md)$/.test(f)),
    [],
    'nothing but the compiled package, its declarations and its docs is published',
  );

  const app = path.join(work, 'app');
  mkdirSync(app);
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await mustRun(
    npm,
    ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', path.join(work, packed.filename)],
    app,
  );
  const installed = path.join(app, 'node_modules', '@mnemos', 'client');
  assert.equal(lstatSync(installed).isSymbolicLink(), false, 'a real copy from the tarball, not a link to the repo');

  writeFileSync(path.join(app, 'smoke.ts'), smokeProgram(engine.url));
  // The shipped declarations are checked too (skipLibCheck off); no @types packages, only the standard DOM fetch types.
  writeFileSync(
    path.join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        lib: ['es2023', 'dom'],
        types: [],
        skipLibCheck: false,
      },
      files: ['smoke.ts'],
    }),
  );
  await mustRun(process.execPath, [tsc, '-p', '.'], app);
  const printed = await mustRun(process.execPath, ['smoke.js'], app);
  const result = JSON.parse(printed) as { id: string; top: string; version: unknown; missing: string };
  assert.match(result.id, /^[0-9a-f-]{36}$/);
  assert.equal(result.top, result.id, 'recall finds the memory the packaged client retained');
  assert.equal(typeof result.version, 'string');
  assert.equal(result.missing, '404 bank_not_found');
});
