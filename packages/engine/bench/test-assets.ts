import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: this file sits at packages/engine/{src,dist}/bench. */
const REPO_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');

/** A folder from a setting (relative to the working directory), or a default relative to the repository root. */
function folder(configured: string | undefined, besideRepository: string): string {
  return configured ? resolve(configured) : resolve(REPO_ROOT, besideRepository);
}

/**
 * The local embedding model folder the tests, benchmarks and scripts run (never copied into the repository):
 * MNEMOS_TEST_MODEL, by default `../shared/models/all-MiniLM-L6-v2` next to the repository. Everything reads it
 * here, so a checkout elsewhere needs only that one setting.
 */
export function testModelDir(env: NodeJS.ProcessEnv = process.env): string {
  return folder(env.MNEMOS_TEST_MODEL, '../shared/models/all-MiniLM-L6-v2');
}

/**
 * The real PostgreSQL server the tests of the external-database path and the gateway use (MNEMOS_TEST_PG_URL); each
 * test file creates and drops databases of its own on it.
 */
export function testPostgresUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.MNEMOS_TEST_PG_URL ?? 'postgres://postgres:postgres@127.0.0.1:5432/postgres';
}

/** The LoCoMo data set folder (MNEMOS_TEST_LOCOMO, by default `../shared/data/locomo` next to the repository). */
export function testLocomoDir(env: NodeJS.ProcessEnv = process.env): string {
  return folder(env.MNEMOS_TEST_LOCOMO, '../shared/data/locomo');
}
