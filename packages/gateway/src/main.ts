// `mnemos gateway`: starts the gateway from the environment and stops it cleanly on SIGINT/SIGTERM.
import { startGateway } from './app.js';
import { ConfigError } from './config.js';

export async function main(env: Record<string, string | undefined> = process.env): Promise<void> {
  let gateway;
  try {
    gateway = await startGateway({ env });
  } catch (err) {
    const message = err instanceof ConfigError || err instanceof Error ? err.message : String(err);
    process.stderr.write(`mnemos gateway: ${message}\n`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(`mnemos gateway listening on ${gateway.url}\n`);
  const stop = (): void => {
    gateway.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
