import { startEngine } from '../index.js';

/** `mnemos serve`: starts the engine from the environment and stops it cleanly on SIGINT/SIGTERM. */
export async function serve(): Promise<number> {
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
