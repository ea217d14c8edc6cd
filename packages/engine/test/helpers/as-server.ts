import type { Database } from '../../src/db/database.js';

/** The engine's database presented as the other kind: the same data, for the choices the engine makes by kind. */
export function presentedAs(db: Database, kind: Database['kind']): Database {
  return new Proxy(db, {
    get: (target, key) => {
      if (key === 'kind') return kind;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * The engine's database as a server would present it (`kind` 'external'): the same data, for the choices recall makes
 * differently on a server, where a long load runs on its own connection.
 */
export function asServer(db: Database): Database {
  return presentedAs(db, 'external');
}
