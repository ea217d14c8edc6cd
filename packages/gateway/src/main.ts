// `mnemos gateway`: starts the gateway from the environment and stops it cleanly on SIGINT/SIGTERM.
import { announcer } from '@mnemos/http-input';
import { gatewayLogger, startGateway, type RunningGateway } from './app.js';
import { ConfigError, loadConfig, unknownGatewayVariables, type GatewayConfig } from './config.js';

/** sysexits.h EX_CONFIG: a setting is wrong; restarting without changing it fails the same way. */
const EXIT_CONFIG = 78;

export async function main(env: Record<string, string | undefined> = process.env): Promise<void> {
  const warnings = unknownGatewayVariables(env);
  let config: GatewayConfig;
  try {
    config = loadConfig(env);
  } catch (err) {
    // Without valid settings there is no logger yet: the typo warnings go with the failure, as plain lines.
    for (const warning of warnings) process.stderr.write(`mnemos gateway: warning: ${warning}\n`);
    failed(err, env);
    return;
  }
  const log = gatewayLogger(config);
  for (const warning of warnings) log.warn(warning);
  let gateway: RunningGateway;
  try {
    gateway = await startGateway({ env, logger: log });
  } catch (err) {
    failed(err, env);
    return;
  }
  // Scripts and supervisors wait for this line.
  announcer(log).info(`gateway listening on ${gateway.url} (OpenAPI at ${gateway.url}/openapi.json)`);
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    gateway.close().then(
      () => {
        announcer(log).info(`gateway stopped (${signal})`);
        process.exit(0);
      },
      (err: unknown) => {
        log.error(`stopping failed: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/** A start-up failure: one line on stderr, like the engine's; the stack only at GATEWAY_LOG_LEVEL=debug. */
function failed(err: unknown, env: Record<string, string | undefined>): void {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`mnemos gateway: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
  if (['debug', 'trace'].includes(env.GATEWAY_LOG_LEVEL ?? '') && err instanceof Error && err.stack) {
    process.stderr.write(`${err.stack}\n`);
  }
  process.exitCode = err instanceof ConfigError ? EXIT_CONFIG : 1;
}
