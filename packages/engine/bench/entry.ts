import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Whether the module at `moduleUrl` is the script node was started with (not imported by another bench or a test). */
export function invokedDirectly(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(moduleUrl);
}

/** Runs a bench's `main` when its module is the script node was started with; a failure is one line and exit 1. */
export function runWhenInvoked(moduleUrl: string, main: () => Promise<unknown>): void {
  if (!invokedDirectly(moduleUrl)) return;
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
