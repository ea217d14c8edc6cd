import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { testPostgresUrl } from '../../bench/test-assets.js';

/** The real PostgreSQL server the tests may use (its own database per file, dropped afterwards). */
export const PG_URL = testPostgresUrl();

export interface ScratchDatabase {
  url: string;
  /** Runs one statement on a connection of its own (outside the engine's pool), as an administrator would. */
  admin<T extends object = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 15_000, query_timeout: 60_000 });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`cannot reach the test PostgreSQL at ${url} (${(error as Error).message}); set MNEMOS_TEST_PG_URL`);
  }
  return client;
}

/** A fresh database on the test server, named at random so parallel files never meet. */
export async function createScratchDatabase(prefix: string): Promise<ScratchDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const server = await connect(PG_URL);
  await server.query(`CREATE DATABASE ${name}`);
  await server.end();
  const u = new URL(PG_URL);
  u.pathname = `/${name}`;
  const url = u.toString();
  return {
    url,
    async admin<T extends object>(sql: string, params: unknown[] = []) {
      const c = await connect(url);
      try {
        return (await c.query<T>(sql, params)).rows;
      } finally {
        await c.end();
      }
    },
    async drop() {
      const c = await connect(PG_URL);
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** Resolves once `check` answers true, checking every `everyMs`; fails after `limitMs` naming what it waited for. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  limitMs = 60_000,
  everyMs = 25,
): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up after ${limitMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
