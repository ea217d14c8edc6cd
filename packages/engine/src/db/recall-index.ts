import type { Database, Queryable } from './database.js';
import { bankIndexName, bankIndexSql } from './migrations/007_recall_index.js';
import { BANK_INDEX_PATTERN, SHARED_INDEX_NAME, sharedIndexSql } from './migrations/012_shared_recall_index.js';

/** What ensureBankIndex found or did. */
export type BankIndexOutcome = 'present' | 'built' | 'building elsewhere';

type IndexState = 'valid' | 'invalid' | 'none';

/** Whether the named index exists and is valid (an interrupted concurrent build leaves an invalid one). */
async function indexState(q: Queryable, name: string): Promise<IndexState> {
  const [index] = await q.query<{ valid: boolean }>(
    `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace`,
    [name],
  );
  return index === undefined ? 'none' : index.valid ? 'valid' : 'invalid';
}

/** Whether the bank's own vector index (migration 007, the embedded database) exists and is valid. */
export function bankIndexState(q: Queryable, tenant: string, bankId: string): Promise<IndexState> {
  return indexState(q, bankIndexName(tenant, bankId));
}

/** Whether the vector index over every bank (migration 012, a server) exists and is valid. */
export function sharedIndexState(q: Queryable): Promise<IndexState> {
  return indexState(q, SHARED_INDEX_NAME);
}

/**
 * Builds an index unless it is there and valid. On a server it is built concurrently (writes go on meanwhile) on a
 * connection of its own; one engine builds it while the others skip (an advisory lock named by the index), and an
 * invalid index left by an interrupted build is dropped and built again. The embedded database is one connection that
 * runs one statement at a time: there the build holds every other statement until it ends.
 */
async function ensureIndex(
  db: Database,
  name: string,
  sql: (concurrently: boolean) => string,
  onBuild: () => void,
): Promise<BankIndexOutcome> {
  const concurrently = db.kind === 'external';
  return db.session(async (session) => {
    const [locked] = await session.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [name]);
    if (!locked?.ok) return 'building elsewhere';
    try {
      const state = await indexState(session, name);
      if (state === 'valid') return 'present';
      if (state === 'invalid')
        await session.query(`DROP INDEX ${concurrently ? 'CONCURRENTLY ' : ''}IF EXISTS ${name}`);
      onBuild();
      await session.query(sql(concurrently));
      return 'built';
    } finally {
      await session.query('SELECT pg_advisory_unlock(hashtext($1))', [name]);
    }
  });
}

/** Builds a bank's own vector index (migration 007) unless it is there and valid (once per bank, when it is large). */
export function ensureBankIndex(
  db: Database,
  tenant: string,
  bankId: string,
  /** Hears that the build starts (after the checks that may make it unnecessary). */
  onBuild: () => void = () => undefined,
): Promise<BankIndexOutcome> {
  return ensureIndex(db, bankIndexName(tenant, bankId), (c) => bankIndexSql(tenant, bankId, c), onBuild);
}

/** Builds the vector index over every bank (migration 012) unless it is there and valid (once per database). */
export function ensureSharedIndex(db: Database, onBuild: () => void = () => undefined): Promise<BankIndexOutcome> {
  return ensureIndex(db, SHARED_INDEX_NAME, sharedIndexSql, onBuild);
}

/**
 * Drops the per-bank indexes of migration 007 once the shared index answers for every bank: each would otherwise
 * still be updated by every insert into its bank. Dropped concurrently, so writes go on.
 */
export async function dropBankIndexes(db: Database): Promise<number> {
  const names = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE i.indrelid = 'memories'::regclass AND c.relname LIKE $1`,
    [BANK_INDEX_PATTERN],
  );
  for (const { name } of names) await db.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
  return names.length;
}

/** What a bank's index build tells its owner. */
export interface BankIndexEvents {
  /** The build starts. */
  building?: (tenant: string, bankId: string) => void;
  /** The build failed (it is tried again at the bank's next recall). */
  failed?: (tenant: string, bankId: string, error: Error) => void;
}

/** How long a bank's index, once seen valid, is taken to be there without asking the catalog again. */
const INDEX_RECHECK_MS = 60_000;

/** The key of the shared index among the builds (a bank's key holds a NUL, so no bank's key is this). */
const SHARED_KEY = 'shared';

/**
 * Makes sure the banks the Postgres tier searches have a vector index, building a missing one in the background (one
 * build of each at a time); recalls meanwhile scan the bank's vectors exactly (slower, same results). On a server
 * that is the one index over every bank (migration 012), built once, after which 007's per-bank indexes are dropped;
 * on the embedded database each large bank has its own (migration 007).
 */
export class BankIndexes {
  private readonly building = new Map<string, Promise<void>>();
  /** When each bank's index was last seen valid: looked at again after INDEX_RECHECK_MS (a reembed drops them). */
  private readonly seenValid = new Map<string, number>();

  constructor(
    private readonly db: Database,
    /** Hears a build that starts, and one that failed (it is tried again at the bank's next recall). */
    private readonly events: BankIndexEvents = {},
  ) {}

  private get shared(): boolean {
    return this.db.kind === 'external';
  }

  private key(tenant: string, bankId: string): string {
    return this.shared ? SHARED_KEY : `${tenant}\u0000${bankId}`;
  }

  /** Starts building the index the bank is searched through when there is none (checked in the background too). */
  request(tenant: string, bankId: string): void {
    const key = this.key(tenant, bankId);
    const seen = this.seenValid.get(key);
    if (this.building.has(key) || (seen !== undefined && Date.now() - seen < INDEX_RECHECK_MS)) return;
    const onBuild = () => this.events.building?.(tenant, bankId);
    const build = (async () => {
      if (this.shared) {
        const built = (await sharedIndexState(this.db)) === 'valid' || (await ensureSharedIndex(this.db, onBuild));
        if (built === 'building elsewhere') return;
        await dropBankIndexes(this.db);
      } else if (
        (await bankIndexState(this.db, tenant, bankId)) !== 'valid' &&
        (await ensureBankIndex(this.db, tenant, bankId, onBuild)) === 'building elsewhere'
      ) {
        return;
      }
      this.seenValid.set(key, Date.now());
    })()
      .catch((error: unknown) =>
        this.events.failed?.(tenant, bankId, error instanceof Error ? error : new Error(String(error))),
      )
      .finally(() => this.building.delete(key));
    this.building.set(key, build);
  }

  /** Waits for the build in progress of the index the bank is searched through, if any. */
  async built(tenant: string, bankId: string): Promise<void> {
    await this.building.get(this.key(tenant, bankId));
  }
}
