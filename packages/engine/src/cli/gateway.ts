import type { CliIo } from './io.js';

/**
 * `mnemos gateway`: runs the gateway of packages/gateway (@mnemos/gateway). It is loaded by name at run time, so the
 * engine neither builds against it nor needs it installed: a self-hosted engine install works without the gateway.
 * The gateway is not on npm (it ships in the container image), so an engine installed from npm never finds it.
 */
export async function gateway(io: CliIo): Promise<number> {
  const specifier = '@mnemos/gateway';
  let mod: { main?: unknown };
  try {
    mod = (await import(specifier)) as { main?: unknown };
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'ERR_MODULE_NOT_FOUND') throw error;
    io.stderr(
      'mnemos gateway: the gateway (@mnemos/gateway) is not installed here and is not published to npm; run it from the container image (docker run <image> gateway, docs/gateway.md) or a checkout of the repository, or run the engine alone with mnemos serve.\n',
    );
    return 1;
  }
  if (typeof mod.main !== 'function') {
    io.stderr('mnemos gateway: @mnemos/gateway does not export main(); update the gateway package.\n');
    return 1;
  }
  await (mod.main as (env: Record<string, string | undefined>) => Promise<void>)(io.env);
  // The gateway keeps running (or has set process.exitCode after printing why it could not start).
  return -1;
}
