import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface EngineProcess {
  url: string;
  child: ChildProcess;
  /** Stops the engine (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * Polls `/health` until the engine answers 200: it listens (and answers 503 "warming") before its database and model
 * are ready. Rejects after `timeoutMs`.
 */
export async function waitUntilReady(url: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await fetch(`${url}/health`).then(
      async (response) => {
        await response.arrayBuffer();
        return response.status;
      },
      () => 0,
    );
    if (status === 200) return;
    if (Date.now() > deadline) {
      throw new Error(`the engine at ${url} was not ready within ${timeoutMs} ms (/health: ${status})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * What an engine process is started with unless the environment says otherwise (the Docker image and `npm start` set
 * the same): one glibc malloc arena for all threads. glibc gives each thread that allocates its own arena, up to 8 per
 * core, and an arena keeps what its thread freed; the engine's threads (the model, the database, V8's compilers and
 * collectors) each held tens of MB that way. In one arena the threads reuse each other's freed memory; the shared
 * lock costs no measurable CPU in retain and recall (docs/benchmarks.md, "The engine's resident memory").
 */
const ENGINE_PROCESS_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '1' };

/** This checkout's CLI: the source file when this module runs from source, else the compiled one. */
function ownCli(): string {
  const fromSource = fileURLToPath(import.meta.url).endsWith('.ts');
  return resolve(fileURLToPath(new URL('.', import.meta.url)), fromSource ? 'cli.ts' : 'cli.js');
}

/**
 * Runs `mnemos serve` in its own process, as users run it, and resolves with its URL once it is ready. Benchmarks use
 * it so the client's work is not charged to the engine's event loop. Loaded from dist it runs the compiled CLI; loaded
 * from source (tsx, `--conditions=source`) it runs the source CLI the same way, so a benchmark measures the code it
 * was started from without a build. `otherCli` runs another checkout's CLI (the A/B bench runs two revisions side by side).
 * `nodeArgs` go to Node itself (`--cpu-prof`, which NODE_OPTIONS does not accept).
 */
export function spawnEngineProcess(
  env: Record<string, string>,
  otherCli?: string,
  nodeArgs: readonly string[] = [],
): Promise<EngineProcess> {
  const cli = otherCli ?? ownCli();
  const loader = cli.endsWith('.ts') ? ['--conditions=source', '--import', 'tsx'] : [];
  const child = spawn(process.execPath, [...nodeArgs, ...loader, cli, 'serve'], {
    // Another checkout's engine runs from that checkout, so `--import tsx` and its packages resolve there.
    cwd: otherCli === undefined ? undefined : resolve(dirname(otherCli), '../../..'),
    env: { ...ENGINE_PROCESS_ENV, ...process.env, MNEMOS_API_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let listening = false;
  return new Promise((done, fail) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /engine listening on (http:\/\/\S+)/.exec(output);
      if (!match || listening) return;
      listening = true;
      const url = match[1]!;
      waitUntilReady(url).then(
        () =>
          done({
            url,
            child,
            stop: () =>
              new Promise<void>((stopped) => {
                if (child.exitCode !== null) {
                  stopped();
                  return;
                }
                child.once('exit', () => stopped());
                child.kill('SIGTERM');
              }),
          }),
        fail,
      );
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => fail(new Error(`engine exited with ${code}:\n${output}`)));
  });
}
