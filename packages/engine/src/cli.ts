#!/usr/bin/env node
import { ConfigError } from './config/load.js';
import { processIo, UsageError } from './cli/io.js';
import { USAGE } from './cli/usage.js';
import { errorMessage } from './util/error-message.js';

/**
 * `mnemos <command>`: serve starts the engine (the default). Each command is loaded only when used, so the client
 * commands (retain, recall, ...) start fast without loading the database or the model. Commands answer an exit code,
 * or -1 to keep running (servers).
 */
async function main(argv: string[]): Promise<number> {
  const command = argv[0] ?? 'serve';
  const args = argv.slice(1);
  switch (command) {
    case 'serve':
      return (await import('./cli/serve.js')).serve();
    case 'gateway':
      return (await import('./cli/gateway.js')).gateway(processIo());
    case 'mcp':
      return (await import('./cli/mcp.js')).mcp(args, processIo());
    case 'retain':
    case 'recall':
    case 'reflect':
    case 'banks':
    case 'memories':
    case 'export':
    case 'import':
      return (await import('./cli/remote.js')).remote(command, args, processIo());
    case 'rotate-key':
      return (await import('./crypto/admin.js')).rotateKeyCommand(args, process.env);
    case 'encrypt-existing':
      return (await import('./crypto/admin.js')).encryptExistingCommand(args, process.env);
    case 'reembed':
      return (await import('./cli/reembed.js')).reembedCommand(args, processIo());
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return 0;
    default:
      console.error(`mnemos: unknown command "${command}"; run mnemos help`);
      return 2;
  }
}

/** sysexits.h EX_CONFIG: a setting is wrong; restarting without changing it fails the same way. */
const EXIT_CONFIG = 78;

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      console.error(`mnemos: ${error.message}; run mnemos help`);
      process.exit(2);
    }
    // Start-up failures are one line (settings, port, home folder, database, model); the stack only at debug.
    const message = errorMessage(error);
    console.error(`mnemos: ${message.replace(/\s*\n\s*/g, ' ')}`);
    const debug = ['debug', 'trace'].includes(process.env.MNEMOS_API_LOG_LEVEL ?? '');
    if (debug && error instanceof Error && error.stack) console.error(error.stack);
    process.exit(exitCodeOf(error));
  },
);

/** Settings errors, and errors that need the setup changed (home not writable, model unobtainable), exit 78. */
function exitCodeOf(error: unknown): number {
  if (error instanceof ConfigError) return EXIT_CONFIG;
  const code = error instanceof Error && 'exitCode' in error ? error.exitCode : undefined;
  return typeof code === 'number' ? code : 1;
}
