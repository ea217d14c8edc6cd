import { moveBankToPartition } from './bank-partition.js';
import type { Database, Queryable } from './database.js';
import { bankIndexName, bankIndexSql } from './migrations/007_recall_index.js';

/** What ensureBankIndex found or did. */
export type BankIndexOutcome = 'present' | 'built' | 'building elsewhere';

/**
 * Whether the bank's vector index exists and is valid (an interrupted concurrent build leaves an invalid one). An
 * index of a partition the bank is no longer in (it was deleted and made again, and stays in the shared partition
 * until it is moved again) is not the bank's: it counts as invalid, to be dropped.
 */
export async function bankIndexState(
  q: Queryable,
  tenant: string,
  bankId: string,
): Promise<'valid' | 'invalid' | 'none'> {
  const [index] = await q.query<{ valid: boolean }>(
    `SELECT i.indisvalid AND i.indrelid IS NOT DISTINCT FROM
       COALESCE(to_regclass(CASE WHEN b.part = 0 THEN 'memories_shared' ELSE 'memories_bank_' || b.part END), i.indrelid)
       AS valid
     FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     LEFT JOIN banks b ON b.tenant = $2 AND b.bank_id = $3
     WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace`,
    [bankIndexName(tenant, bankId), tenant, bankId],
  );
  return index === undefined ? 'none' : index.valid ? 'valid' : 'invalid';
}

/**
 * Whether a bank is moved into a partition of its own before its index is built: on a server from PostgreSQL 15,
 * where a row moved between partitions is an update for foreign keys (a derived fact and an entity follow their
 * memory). Before 15 the move would be a deletion for them, and ON DELETE CASCADE would take them with it: there the
 * bank keeps a partial index in the shared partition.
 */
async function movesBanks(db: Database): Promise<boolean> {
  if (db.kind !== 'external') return false;
  const [version] = await db.query<{ number: number }>("SELECT current_setting('server_version_num')::int AS number");
  return (version?.number ?? 0) >= 150_000;
}

/**
 * Builds a bank's vector index (migration 007) unless it is there and valid. On a server the bank is first moved into
 * a partition of its own (db/bank-partition.ts), so the build reads its rows alone, and the index is built
 * concurrently (writes go on meanwhile) on a connection of its own; one engine builds it while the others skip (an
 * advisory lock named by the index), and an invalid index left by an interrupted build is dropped and built again.
 * The embedded database is one connection that runs one statement at a time: there the build holds every other
 * statement until it ends (once per bank, when it grows past the tier's threshold), in the shared partition.
 */
export async function ensureBankIndex(
  db: Database,
  tenant: string,
  bankId: string,
  /** Hears that the build starts (after the checks that may make it unnecessary). */
  onBuild: () => void = () => undefined,
): Promise<BankIndexOutcome> {
  const concurrently = db.kind === 'external';
  const name = bankIndexName(tenant, bankId);
  return db.session(async (session) => {
    const [locked] = await session.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [name]);
    if (!locked?.ok) return 'building elsewhere';
    try {
      const state = await bankIndexState(session, tenant, bankId);
      if (state === 'valid') return 'present';
      if (state === 'invalid')
        await session.query(`DROP INDEX ${concurrently ? 'CONCURRENTLY ' : ''}IF EXISTS ${name}`);
      onBuild();
      const part = (await movesBanks(db)) ? await moveBankToPartition(db, tenant, bankId) : 0;
      await session.query(bankIndexSql(tenant, bankId, concurrently, part));
      return 'built';
    } finally {
      await session.query('SELECT pg_advisory_unlock(hashtext($1))', [name]);
    }
  });
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

/**
 * Makes sure the banks the Postgres tier searches have their vector index, building a missing one in the background
 * (one build per bank at a time); recalls meanwhile scan the bank's vectors exactly (slower, same results).
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

  /** Starts building the bank's index when it has none (checked in the background too); answers at once. */
  request(tenant: string, bankId: string): void {
    const key = `${tenant}\u0000${bankId}`;
    const seen = this.seenValid.get(key);
    if (this.building.has(key) || (seen !== undefined && Date.now() - seen < INDEX_RECHECK_MS)) return;
    const build = (async () => {
      if ((await bankIndexState(this.db, tenant, bankId)) === 'valid') this.seenValid.set(key, Date.now());
      else if (
        (await ensureBankIndex(this.db, tenant, bankId, () => this.events.building?.(tenant, bankId))) !==
        'building elsewhere'
      ) {
        this.seenValid.set(key, Date.now());
      }
    })()
      .catch((error: unknown) =>
        this.events.failed?.(tenant, bankId, error instanceof Error ? error : new Error(String(error))),
      )
      .finally(() => this.building.delete(key));
    this.building.set(key, build);
  }

  /** Waits for the bank's build in progress, if any. */
  async built(tenant: string, bankId: string): Promise<void> {
    await this.building.get(`${tenant}\u0000${bankId}`);
  }
}
