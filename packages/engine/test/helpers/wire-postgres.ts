import type { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface WirePostgres {
  /** A connection URL for node-postgres (MNEMOS_API_DATABASE_URL). */
  url: string;
  /** Stops listening; the PGlite instance stays open for its owner to inspect and close. */
  stop(): Promise<void>;
}

/** Serves a PGlite database over the Postgres wire protocol on a free local port: an external server in-process. */
export async function serveOverTheWire(db: PGlite, maxConnections = 20): Promise<WirePostgres> {
  const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections });
  await server.start();
  // The server picks a free port (port 0) but exposes only its configured one, so read the bound address.
  const port = (server as unknown as { server: { address(): { port: number } } }).server.address().port;
  return { url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`, stop: () => server.stop() };
}
