import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { solutionBuildState } from '../../bin/build-state.mjs';
import { waitUntilReady } from '../../src/process.js';
import { REPO_ROOT } from './engine.js';

export interface EngineProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  /** Stops the process (SIGTERM, or SIGKILL to simulate a crash) and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Whether every project's build is current (as `npm test` leaves it: it builds before the tests run). Then the tests
 * start the compiled entry points; else the sources through tsx. Both run the same code, but from source every
 * process and each of its threads loads tsx and the TypeScript transforms again, seconds of CPU per engine start that
 * the tests starting dozens of processes paid over and over. A source changed since the last build runs from source.
 */
const BUILT = solutionBuildState(resolve(REPO_ROOT, 'tsconfig.json')) === 'current';

/** The `node` arguments that run `packages/<pkg>/src/<name>.ts`: its compiled file when built, else the source. */
export function entryArgs(pkg: string, name: string): string[] {
  const at = (folder: string, ext: string) => resolve(REPO_ROOT, 'packages', pkg, folder, `${name}.${ext}`);
  return BUILT ? [at('dist', 'js')] : ['--conditions=source', '--import', 'tsx', at('src', 'ts')];
}

/** How a test starts `mnemos` (see entryArgs). */
export const CLI_COMMAND: readonly string[] = entryArgs('engine', 'cli');

export interface CliUser {
  uid?: number;
  gid?: number;
  /**
   * Run as this uid and gid with no supplementary groups, as a container's `USER 1000:1000` does (spawn's uid option
   * keeps root's groups). Needs root.
   */
  setpriv?: number;
}

/**
 * How long a test waits for an engine process to start or a CLI run to end: loading the model and opening the
 * database are CPU-bound, and on a loaded 2-core machine running several test files at once a start can take minutes.
 */
export const PROCESS_LIMIT_MS = 300_000;

/** Runs `mnemos <args>` from source in a child process and collects its output. */
export function runCli(args: string[], env: Record<string, string>, options: CliUser = {}) {
  const { setpriv, ...user } = options;
  const command = [process.execPath, ...CLI_COMMAND, ...args];
  const asUser = setpriv === undefined ? [] : ['setpriv', `--reuid=${setpriv}`, `--regid=${setpriv}`, '--clear-groups'];
  const [file, ...rest] = [...asUser, ...command];
  return spawn(file!, rest, {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...user,
  });
}

/**
 * Starts `mnemos serve` in its own process and resolves once it is ready (`/health` answers 200), or with `ready:
 * false` as soon as it listens (it answers "warming" until ready). `user` runs it as another uid (see CliUser).
 */
export function spawnEngine(
  env: Record<string, string>,
  timeoutMs = PROCESS_LIMIT_MS,
  options: { ready?: boolean; user?: CliUser } = {},
): Promise<EngineProcess> {
  const child = runCli(['serve'], { ...env, MNEMOS_API_LOG_LEVEL: env.MNEMOS_API_LOG_LEVEL ?? 'warn' }, options.user);
  const started = Date.now();
  let output = '';
  let listening = false;
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`engine did not start within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /engine listening on (http:\/\/\S+)/.exec(output);
      if (!match || listening) return;
      listening = true;
      const running: EngineProcess = {
        url: match[1]!,
        child,
        output: () => output,
        stop: (signal = 'SIGTERM') =>
          new Promise((done) => {
            if (child.exitCode !== null || child.signalCode !== null) {
              done(child.exitCode);
              return;
            }
            child.once('exit', (code) => done(code));
            child.kill(signal);
          }),
      };
      const left = timeoutMs - (Date.now() - started);
      const ready = options.ready === false ? Promise.resolve() : waitUntilReady(running.url, left);
      ready.then(
        () => {
          clearTimeout(timer);
          resolvePromise(running);
        },
        (error: unknown) => {
          clearTimeout(timer);
          child.kill('SIGKILL');
          reject(new Error(`${error instanceof Error ? error.message : String(error)}:\n${output}`));
        },
      );
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`engine exited with ${code} before it was ready:\n${output}`));
    });
  });
}

/**
 * Runs the CLI to completion and answers its exit code and output. A process still running after `timeoutMs` (a
 * start-up that waits on something forever) is killed and the call fails with its output, rather than hanging the run.
 */
export function runCliToEnd(
  args: string[],
  env: Record<string, string>,
  options: CliUser & { timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { timeoutMs = PROCESS_LIMIT_MS, ...user } = options;
  const child = runCli(args, env, user);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((done, fail) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`mnemos ${args.join(' ')} did not exit within ${timeoutMs} ms:\n${stdout}${stderr}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

/** The pid of a process that has exited (for stale lock files). */
export function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}
