import type { Database } from '../../src/db/database.js';
import { asServer } from './as-server.js';

/**
 * The engine's database as a server presents it, on which every compact copy's load is held at its first read until
 * `release()`: a recall that waits for such a load never ends, so a test sees a recall answer while a load is under
 * way without racing a clock. The first read is the sample of vectors the copy learns its levels from; it runs outside
 * any transaction, so holding it holds nothing else on the embedded database, which runs one statement at a time.
 */
export function heldCompactLoads(db: Database): { db: Database; release: () => void; held: () => number } {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let held = 0;
  const server = asServer(db);
  const proxy = new Proxy(server, {
    get: (target, key) => {
      if (key !== 'query') return Reflect.get(target, key, target) as unknown;
      return async (sql: string, params?: Parameters<Database['query']>[1]) => {
        if (/string_agg\(/.test(sql) && /FROM memories/.test(sql)) {
          held++;
          await gate;
        }
        return target.query(sql, params);
      };
    },
  });
  return { db: proxy, release: () => release(), held: () => held };
}
