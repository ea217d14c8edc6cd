import type { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface WirePostgres {
  /** A connection URL for node-postgres (MNEMOS_API_DATABASE_URL). */
  url: string;
  /** Stops listening and drops every connection; the PGlite instance stays open for its owner to inspect and close. */
  stop(): Promise<void>;
  /** Listens again on the same port after stop(), as a restarted server would. */
  resume(): Promise<void>;
}

/** Serves a PGlite database over the Postgres wire protocol on a free local port: an external server in-process. */
export async function serveOverTheWire(db: PGlite, maxConnections = 20): Promise<WirePostgres> {
  let server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections });
  await server.start();
  // The server picks a free port (port 0) but exposes only its configured one, so read the bound address.
  const port = (server as unknown as { server: { address(): { port: number } } }).server.address().port;
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    stop: () => server.stop(),
    async resume() {
      // A dropped connection's open transaction is rolled back behind the statement it was running; a new connection
      // must not start inside it.
      while (db.isInTransaction()) await new Promise((r) => setTimeout(r, 10));
      server = new PGLiteSocketServer({ db, port, host: '127.0.0.1', maxConnections });
      await server.start();
    },
  };
}
