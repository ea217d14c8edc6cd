import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';
import { validate, ValidationSeverity, type ValidatorSettings } from 'dockerfile-utils';
import { parse } from 'yaml';
import { loadEngineConfig } from '../../engine/src/config/load.js';
import { engineEnvSchema } from '../../engine/src/config/schema.js';
import { gatewayEnvSchema, loadConfig } from '../src/config.js';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
const read = (file: string): string => readFileSync(resolve(ROOT, file), 'utf8');

const ENGINE_VARIABLES = new Set(Object.keys(engineEnvSchema.shape));
const GATEWAY_VARIABLES = new Set(Object.keys(gatewayEnvSchema.shape));
const POSTGRES_VARIABLES = new Set(['POSTGRES_USER', 'POSTGRES_DB', 'POSTGRES_PASSWORD']);

/** Every check of the Dockerfile linter, as an error. */
const STRICT: ValidatorSettings = {
  deprecatedMaintainer: ValidationSeverity.ERROR,
  directiveCasing: ValidationSeverity.ERROR,
  emptyContinuationLine: ValidationSeverity.ERROR,
  instructionCasing: ValidationSeverity.ERROR,
  instructionCmdMultiple: ValidationSeverity.ERROR,
  instructionEntrypointMultiple: ValidationSeverity.ERROR,
  instructionHealthcheckMultiple: ValidationSeverity.ERROR,
  instructionJSONInSingleQuotes: ValidationSeverity.ERROR,
  instructionWorkdirRelative: ValidationSeverity.ERROR,
};

function lint(text: string): string[] {
  return validate(text, STRICT).map(
    (d) => `line ${d.range.start.line + 1}: ${typeof d.message === 'string' ? d.message : d.message.value}`,
  );
}

/** The Dockerfile's instructions, split into stages at each FROM. */
function stages(text: string): Instruction[][] {
  const out: Instruction[][] = [];
  for (const instruction of DockerfileParser.parse(text).getInstructions()) {
    if (instruction.getKeyword() === 'FROM') out.push([]);
    out[out.length - 1]?.push(instruction);
  }
  return out;
}

const args = (instruction: Instruction): string => instruction.getArgumentsContent() ?? '';
const find = (stage: Instruction[], keyword: string): Instruction[] => stage.filter((i) => i.getKeyword() === keyword);

describe('Dockerfile', () => {
  const text = read('Dockerfile');

  it('passes the Dockerfile linter with every check an error (and the linter does catch mistakes)', () => {
    assert.deepEqual(lint(text), []);
    assert.deepEqual(lint('FROM node:22-bookworm-slim\nEXPOSE port\n'), ['line 2: Invalid containerPort: port']);
  });

  it('builds in two node:22-bookworm-slim stages: npm ci, build, then npm prune --omit=dev', () => {
    const [build, run, ...more] = stages(text);
    assert.equal(more.length, 0);
    for (const stage of [build!, run!]) assert.match(args(stage[0]!), /^node:22-bookworm-slim( AS build)?$/);
    const commands = find(build!, 'RUN').map(args).join('\n');
    assert.ok(commands.indexOf('npm ci') >= 0 && commands.indexOf('npm ci') < commands.indexOf('npx tsc -b'));
    assert.ok(commands.indexOf('npx tsc -b') < commands.indexOf('npm prune --omit=dev'));
  });

  it('runs as 1000:1000 under tini with /data, 8888 and a /health/live check; copies only built output', () => {
    const run = stages(text)[1]!;
    assert.deepEqual(find(run, 'USER').map(args), ['1000:1000']);
    const env = find(run, 'ENV').map(args).join(' ');
    assert.match(env, /\bMNEMOS_HOME=\/data\b/);
    assert.deepEqual(find(run, 'VOLUME').map(args), ['/data']);
    assert.deepEqual(find(run, 'EXPOSE').map(args), ['8888']);
    assert.match(args(find(run, 'HEALTHCHECK')[0]!), /\/health\/live/);
    assert.match(
      args(find(run, 'ENTRYPOINT')[0]!),
      /^\["tini", "--", "node", "\/app\/packages\/engine\/dist\/cli\.js"\]$/,
    );
    assert.match(find(run, 'RUN').map(args).join('\n'), /apt-get install .*\btini\b/);
    for (const copy of find(run, 'COPY')) {
      assert.match(
        copy.getTextContent(),
        /^COPY --from=build \S+ \S+$/,
        'the run stage takes everything from the build stage',
      );
      assert.doesNotMatch(args(copy), /\/src\b|\/test\b/, 'no sources or tests in the image');
    }
    // The image's own settings are the engine's, besides the runtime's: Node's mode and glibc's malloc arenas.
    const runtime = new Set(['NODE_ENV', 'MALLOC_ARENA_MAX']);
    for (const [name] of env.matchAll(/\b([A-Z][A-Z0-9_]*)=/g)) {
      const variable = name.slice(0, -1);
      if (!runtime.has(variable)) assert.ok(ENGINE_VARIABLES.has(variable), `${variable} is not an engine setting`);
    }
  });

  it('copies every workspace package into both stages (a package left out breaks npm ci or the run)', () => {
    const packages = readdirSync(resolve(ROOT, 'packages')).filter((name) =>
      existsSync(resolve(ROOT, 'packages', name, 'package.json')),
    );
    const [build, run] = stages(text);
    const copied = (stage: Instruction[]) => find(stage, 'COPY').map(args).join('\n');
    for (const name of packages) {
      assert.match(
        copied(build!),
        new RegExp(`packages/${name}/package\\.json`),
        `${name} is not installed in the build`,
      );
      assert.match(copied(run!), new RegExp(`packages/${name}/dist`), `${name} is not copied into the image`);
    }
  });

  it('.dockerignore keeps dependencies, build output, tests, data and secrets out of the build context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#'));
    for (const entry of ['**/node_modules', '**/dist', 'packages/*/test', '**/.mnemos', '.git', 'secrets', '*.env']) {
      assert.ok(ignored.includes(entry), `${entry} is not ignored`);
    }
  });
});

interface ComposeService {
  image?: string;
  build?: unknown;
  profiles?: string[];
  command?: string[];
  environment?: Record<string, string>;
  env_file?: Array<{ path: string; required: boolean }>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[]; start_period?: string; start_interval?: string };
  tmpfs?: string[];
}

describe('compose.yaml', () => {
  const compose = parse(read('compose.yaml'), { merge: true }) as {
    services: Record<string, ComposeService>;
    volumes: Record<string, unknown>;
  };
  const services = compose.services;
  const runsGateway = (s: ComposeService): boolean => s.command?.[0] === 'gateway';

  it('by default runs the engine alone, from this image, with its data in a named volume', () => {
    const always = Object.entries(services)
      .filter(([, s]) => s.profiles === undefined)
      .map(([name]) => name);
    assert.deepEqual(always, ['engine']);
    const engine = services['engine']!;
    assert.equal(engine.image, 'mnemos:local');
    assert.deepEqual(engine.ports, ['8888:8888']);
    assert.deepEqual(engine.volumes, ['mnemos-data:/data']);
    assert.ok('mnemos-data' in compose.volumes, 'mnemos-data is a named volume');
  });

  it('every variable a service sets is one its program accepts, and the settings parse', () => {
    // The secrets come from env files at run time; stand-ins complete each configuration here.
    const secrets = {
      engine: {
        MNEMOS_API_DATABASE_URL: 'postgres://mnemos:pw@memory-db:5432/mnemos',
        MNEMOS_API_AUTH_TOKEN: 'a'.repeat(32),
      },
      gateway: {
        GATEWAY_DATABASE_URL: 'postgres://gateway:pw@control-db:5432/gateway',
        GATEWAY_ADMIN_TOKEN: 'b'.repeat(32),
        GATEWAY_ENGINE_TOKEN: 'a'.repeat(32),
      },
    };
    for (const [name, service] of Object.entries(services)) {
      const env = service.environment ?? {};
      const accepted = service.image?.startsWith('mnemos')
        ? runsGateway(service)
          ? GATEWAY_VARIABLES
          : ENGINE_VARIABLES
        : POSTGRES_VARIABLES;
      for (const variable of Object.keys(env))
        assert.ok(accepted.has(variable), `${name}: ${variable} is not accepted`);
      if (!service.image?.startsWith('mnemos')) continue;
      if (runsGateway(service)) assert.doesNotThrow(() => loadConfig({ ...env, ...secrets.gateway }), name);
      else assert.doesNotThrow(() => loadEngineConfig({ ...env, ...(service.env_file ? secrets.engine : {}) }), name);
    }
  });

  it('--profile managed adds the gateway, its Postgres and an engine on pgvector, started in health order', () => {
    const managed = Object.entries(services)
      .filter(([, s]) => s.profiles?.includes('managed'))
      .map(([name]) => name);
    assert.deepEqual(managed.sort(), ['control-db', 'engine-pg', 'gateway', 'memory-db']);
    assert.match(services['memory-db']!.image!, /^pgvector\/pgvector:pg\d+$/);
    assert.equal(services['engine-pg']!.image, 'mnemos:local');
    assert.equal(services['gateway']!.environment?.['GATEWAY_ENGINE_URL'], 'http://engine-pg:8888');
    for (const [name, service] of Object.entries(services)) {
      for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
        assert.equal(condition, 'service_healthy', `${name} waits for ${dependency} to be healthy`);
        assert.ok(services[dependency]?.healthcheck, `${dependency} has a health check`);
      }
    }
    assert.deepEqual(Object.keys(services['gateway']!.depends_on ?? {}).sort(), ['control-db', 'engine-pg']);
    assert.deepEqual(Object.keys(services['engine-pg']!.depends_on ?? {}), ['memory-db']);
  });

  it('passes secrets through env files under secrets/, never inline', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const variable of Object.keys(service.environment ?? {})) {
        assert.doesNotMatch(
          variable,
          /PASSWORD|TOKEN|KEY|SECRET|DATABASE_URL/,
          `${name} sets the secret ${variable} inline`,
        );
      }
      if (name === 'engine') continue;
      assert.ok(
        service.env_file?.every((f) => f.path.startsWith('./secrets/')),
        `${name} reads its secrets from ./secrets`,
      );
      // A missing secrets file stops the service at once with Compose's "env file ... not found", not later with a
      // database or gateway that exits for a reason the user must dig out of its log.
      assert.ok(
        service.env_file?.every((f) => f.required),
        `${name} refuses to start without its secrets file`,
      );
    }
  });

  it("mounts something of the gateway's own at the image's /data, so no anonymous volume is left per container", () => {
    const gateway = services['gateway']!;
    const mounts = [...(gateway.volumes ?? []), ...(gateway.tmpfs ?? [])].map((m) => m.split(':'));
    assert.ok(
      mounts.some((m) => m[0] === '/data' || m[1] === '/data'),
      `gateway mounts ${JSON.stringify(mounts)}`,
    );
  });

  it('gives the engine on Postgres a start period longer than a slow first model download, checked often', () => {
    const check = services['engine-pg']!.healthcheck!;
    const minutes = /^(\d+)m$/.exec(check.start_period ?? '')?.[1];
    assert.ok(Number(minutes) >= 30, `start_period ${check.start_period}`);
    assert.ok(check.start_interval, 'start_interval makes it healthy as soon as it is ready');
  });
});
