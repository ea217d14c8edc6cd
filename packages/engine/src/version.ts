import { createRequire } from 'node:module';

/** The engine package's version, read without loading the HTTP server (so `mnemos mcp` over stdio stays light). */
export const ENGINE_VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version;
