import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { REPO_ROOT } from './engine.js';

export interface EngineProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  /** Stops the process (SIGTERM, or SIGKILL to simulate a crash) and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const CLI = resolve(REPO_ROOT, 'packages/engine/src/cli.ts');

export interface CliUser {
  uid?: number;
  gid?: number;
  /**
   * Run as this uid and gid with no supplementary groups, as a container's `USER 1000:1000` does (spawn's uid option
   * keeps root's groups). Needs root.
   */
  setpriv?: number;
}

/** Runs `mnemos <args>` from source in a child process and collects its output. */
export function runCli(args: string[], env: Record<string, string>, options: CliUser = {}) {
  const { setpriv, ...user } = options;
  const command = [process.execPath, '--conditions=source', '--import', 'tsx', CLI, ...args];
  const asUser = setpriv === undefined ? [] : ['setpriv', `--reuid=${setpriv}`, `--regid=${setpriv}`, '--clear-groups'];
  const [file, ...rest] = [...asUser, ...command];
  return spawn(file!, rest, {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...user,
  });
}

/** Starts `mnemos serve` in its own process and resolves once it listens. */
export function spawnEngine(
  env: Record<string, string>,
  timeoutMs = 90_000,
  user: CliUser = {},
): Promise<EngineProcess> {
  const child = runCli(['serve'], { ...env, MNEMOS_API_LOG_LEVEL: env.MNEMOS_API_LOG_LEVEL ?? 'warn' }, user);
  let output = '';
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`engine did not start within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /engine listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolvePromise({
          url: match[1]!,
          child,
          output: () => output,
          stop: (signal = 'SIGTERM') =>
            new Promise((done) => {
              if (child.exitCode !== null || child.signalCode !== null) return done(child.exitCode);
              child.once('exit', (code) => done(code));
              child.kill(signal);
            }),
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`engine exited with ${code} before listening:\n${output}`));
    });
  });
}

/** Runs the CLI to completion and answers its exit code and output. */
export function runCliToEnd(
  args: string[],
  env: Record<string, string>,
  options: CliUser = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = runCli(args, env, options);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((done) => child.once('exit', (code) => done({ code, stdout, stderr })));
}
