// The gateway-wide secrets' table: each secret is written once, by whichever gateway starts first, and read by all.
import type { Pool } from './db.js';

/** The stored secret `name`, stored as `value` first if no gateway stored it yet. */
export async function secretOrStore<T>(pool: Pool, name: string, value: T): Promise<T> {
  await pool.query('INSERT INTO gateway_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
    name,
    JSON.stringify(value),
  ]);
  const res = await pool.query<{ value: T }>('SELECT value FROM gateway_secrets WHERE name = $1', [name]);
  const row = res.rows[0];
  if (row === undefined) throw new Error(`gateway secret ${name} is missing`);
  return row.value;
}
