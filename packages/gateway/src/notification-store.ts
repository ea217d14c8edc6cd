// Postgres LISTEN/NOTIFY on the control plane: how gateways tell each other what changed (evicted credentials, quota
// units asked back). Each gateway listens on one dedicated connection; notifying goes through the pool.
import pg from 'pg';
import type { Pool } from './db.js';

/** A listening connection. */
export interface Listener {
  end(): Promise<void>;
}

export interface ListenHandlers {
  notification(channel: string, payload: string | undefined): void;
  /** The connection failed and is closed: notifications may have been missed. */
  lost(listener: Listener): void;
}

/** Opens a connection that listens on `channels`. */
export async function listen(
  databaseUrl: string,
  channels: readonly string[],
  handlers: ListenHandlers,
): Promise<Listener> {
  const client = new pg.Client({ connectionString: databaseUrl });
  const listener: Listener = { end: () => client.end() };
  client.on('error', () => {
    client.end().catch(() => undefined);
    handlers.lost(listener);
  });
  client.on('notification', (msg) => handlers.notification(msg.channel, msg.payload));
  await client.connect();
  for (const channel of channels) await client.query(`LISTEN ${channel}`);
  return listener;
}

export async function notify(pool: Pool, channel: string, payload: string): Promise<void> {
  await pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
}
