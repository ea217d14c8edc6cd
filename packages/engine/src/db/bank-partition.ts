import type { Database, Queryable } from './database.js';

/** The name of a bank's own partition of `memories`, by its number (migration 019). */
export function bankPartitionName(part: number): string {
  return `memories_bank_${part}`;
}

/**
 * How long making a partition waits for the locks it needs. Postgres makes a partition under an exclusive lock of
 * the partitioned table and of the shared partition, which waits for the statements reading them and holds up every
 * statement after it: rather than hold up every bank behind a long statement, the build fails and is tried again at
 * the bank's next recall.
 */
const PARTITION_LOCK_WAIT = '2s';

/** The storage settings and the columns without planner statistics of the shared partition, which a bank's takes. */
async function sharedPartitionSettings(q: Queryable): Promise<{ storage: string[]; noStatistics: string[] }> {
  const [table] = await q.query<{ options: string[] | null }>(
    "SELECT reloptions AS options FROM pg_class WHERE oid = 'memories_shared'::regclass",
  );
  const columns = await q.query<{ name: string }>(
    `SELECT attname AS name FROM pg_attribute
     WHERE attrelid = 'memories_shared'::regclass AND attnum > 0 AND NOT attisdropped AND attstattarget = 0`,
  );
  return { storage: table?.options ?? [], noStatistics: columns.map((c) => c.name) };
}

const identifier = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * Makes an empty partition of `memories` under the next number and answers the number, in a transaction of its own that
 * holds its locks for milliseconds. It takes the shared partition's storage settings and its columns without planner
 * statistics, and the indexes of the partitioned table (migration 019). The shared partition's CHECK (part = 0) spares
 * Postgres reading it to prove it holds no row of the new partition.
 */
export async function createBankPartition(db: Database): Promise<number> {
  return db.transaction(async (tx) => {
    await tx.query(`SELECT set_config('lock_timeout', '${PARTITION_LOCK_WAIT}', true)`);
    // Engines that make partitions at once take turns, so each takes the number after the highest made (a counter
    // shared by every tenant would be a sequence, which no tenant data has).
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('mnemos_bank_partitions'))");
    const [numbered] = await tx.query<{ part: number }>(
      `SELECT COALESCE(max(substring(c.relname FROM '^memories_bank_([0-9]+)$')::int), 0) + 1 AS part
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'memories'::regclass`,
    );
    const part = numbered?.part ?? 1;
    const table = bankPartitionName(part);
    const { storage, noStatistics } = await sharedPartitionSettings(tx);
    const settings = storage.length > 0 ? ` WITH (${storage.join(', ')})` : '';
    await tx.query(`CREATE TABLE ${table} PARTITION OF memories FOR VALUES IN (${part})${settings}`);
    if (noStatistics.length > 0) {
      const columns = noStatistics.map((c) => `ALTER COLUMN ${identifier(c)} SET STATISTICS 0`).join(', ');
      await tx.query(`ALTER TABLE ${table} ${columns}`);
    }
    return part;
  });
}

/**
 * Moves a bank's memories from the shared partition into partition `part` (made by createBankPartition), in the
 * caller's transaction, and answers the bank's partition after it: `part`, or the one it had already been moved to,
 * or 0 for a bank that does not exist. It holds the bank's row exclusively: retains into the bank (which share the row
 * while they write) wait for the move, then write the bank's new number. The move is not a change to any memory: the
 * triggers stand aside while it runs (`mnemos.moving`, migration 019), and the facts and entities of a moved memory
 * follow it (ON UPDATE CASCADE).
 */
export async function moveBankRows(tx: Queryable, tenant: string, bankId: string, part: number): Promise<number> {
  const [bank] = await tx.query<{ part: number }>(
    'SELECT part FROM banks WHERE tenant = $1 AND bank_id = $2 FOR UPDATE',
    [tenant, bankId],
  );
  if (bank === undefined) return 0;
  if (bank.part !== 0) return bank.part;
  await tx.query("SELECT set_config('mnemos.moving', 'on', true)");
  await tx.query('UPDATE memories SET part = $3 WHERE tenant = $1 AND bank_id = $2 AND part = 0', [
    tenant,
    bankId,
    part,
  ]);
  await tx.query("SELECT set_config('mnemos.moving', 'off', true)");
  await tx.query('UPDATE banks SET part = $3 WHERE tenant = $1 AND bank_id = $2', [tenant, bankId, part]);
  return part;
}

/**
 * Moves a bank into a partition of its own unless it has one, and answers its partition (0: the bank does not
 * exist). The partition is made first, in a transaction of its own (createBankPartition), so the move's transaction
 * holds no lock that stops other banks' reads and writes. A partition the move did not fill is dropped again; the two
 * partitions a move changed are analyzed after it.
 */
export async function moveBankToPartition(db: Database, tenant: string, bankId: string): Promise<number> {
  const [bank] = await db.query<{ part: number }>('SELECT part FROM banks WHERE tenant = $1 AND bank_id = $2', [
    tenant,
    bankId,
  ]);
  if (bank === undefined || bank.part !== 0) return bank?.part ?? 0;
  const part = await createBankPartition(db);
  const dropUnused = (): Promise<void> =>
    db
      .transaction(async (tx) => {
        await tx.query(`SELECT set_config('lock_timeout', '${PARTITION_LOCK_WAIT}', true)`);
        await tx.query(`DROP TABLE IF EXISTS ${bankPartitionName(part)}`);
      })
      .catch(() => undefined);
  let moved: number;
  try {
    moved = await db.transaction((tx) => moveBankRows(tx, tenant, bankId, part));
  } catch (error) {
    await dropUnused();
    throw error;
  }
  if (moved !== part) {
    await dropUnused();
    return moved;
  }
  await analyzeMoved(db, part);
  return moved;
}

/**
 * Brings the planner's figures of the two partitions a move changed up to date. Until then it takes the bank's rows to
 * be still in the shared partition, and reads it whole for every recall of the bank until the server's autovacuum
 * analyzes it, which is not bound to happen soon.
 */
export async function analyzeMoved(q: Queryable, part: number): Promise<void> {
  await q.query(`ANALYZE memories_shared, ${bankPartitionName(part)}`);
}
