import { createRequire } from 'node:module';

/** The engine package's version, read without loading the HTTP server (so `mnemos mcp` over stdio stays light). */
export const ENGINE_VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

/**
 * The version of the API the OpenAPI document describes (its info.version), not of the package: it changes when the
 * described API changes, in semver terms (major: a breaking change of /v1), whatever release ships it.
 */
export const API_DESCRIPTION_VERSION = '1.0.0';
