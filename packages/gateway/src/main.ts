// `mnemos gateway`: starts the gateway from the environment and stops it cleanly on SIGINT/SIGTERM.
import { startGateway } from './app.js';
import { ConfigError, unknownGatewayVariables } from './config.js';

/** sysexits.h EX_CONFIG: a setting is wrong; restarting without changing it fails the same way. */
const EXIT_CONFIG = 78;

export async function main(env: Record<string, string | undefined> = process.env): Promise<void> {
  for (const warning of unknownGatewayVariables(env)) process.stderr.write(`mnemos gateway: warning: ${warning}\n`);
  let gateway;
  try {
    gateway = await startGateway({ env });
  } catch (err) {
    // One line per failure; the stack only at GATEWAY_LOG_LEVEL=debug.
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`mnemos gateway: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
    if (['debug', 'trace'].includes(env.GATEWAY_LOG_LEVEL ?? '') && err instanceof Error && err.stack) {
      process.stderr.write(`${err.stack}\n`);
    }
    process.exitCode = err instanceof ConfigError ? EXIT_CONFIG : 1;
    return;
  }
  process.stdout.write(`mnemos gateway listening on ${gateway.url}\n`);
  const stop = (): void => {
    gateway.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
