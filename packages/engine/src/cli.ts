#!/usr/bin/env node
import { ConfigError } from './config/load.js';
import { encryptExistingCommand, rotateKeyCommand } from './crypto/admin.js';
import { startEngine } from './index.js';

/** `mnemos <command>`: serve starts the engine (the default). */
async function main(argv: string[]): Promise<number> {
  const command = argv[0] ?? 'serve';
  switch (command) {
    case 'serve': {
      const running = await startEngine();
      console.log(`[mnemos] engine listening on ${running.url} (docs at ${running.url}/docs)`);
      const stop = async () => {
        await running.close();
        process.exit(0);
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      return -1;
    }
    case 'rotate-key':
      return rotateKeyCommand(argv.slice(1), process.env);
    case 'encrypt-existing':
      return encryptExistingCommand(argv.slice(1), process.env);
    case 'help':
    case '--help':
    case '-h':
      console.log('usage: mnemos serve');
      console.log('       mnemos rotate-key [--phase begin|finish|all]   (MNEMOS_API_ENCRYPTION_MASTER_KEY -> MNEMOS_API_ENCRYPTION_NEW_MASTER_KEY)');
      console.log('       mnemos encrypt-existing                        (encrypts memories stored before the key was set)');
      return 0;
    default:
      console.error(`mnemos: unknown command "${command}"; run mnemos help`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    // Start-up failures are one clear line (settings, home folder, database, model), not a stack trace.
    const known = error instanceof ConfigError || (error instanceof Error && /Error$/.test(error.name) && error.name !== 'Error');
    console.error(`mnemos: ${error instanceof Error ? error.message : String(error)}`);
    if (!known && error instanceof Error && error.stack) console.error(error.stack);
    process.exit(1);
  },
);
