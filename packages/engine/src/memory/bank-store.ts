import type { Queryable, SqlParam } from '../db/database.js';

export interface Disposition {
  skepticism: number;
  literalism: number;
  empathy: number;
}

/** A bank's profile: who it is about and how reflect should answer for it. */
export interface Bank {
  bankId: string;
  name: string;
  mission: string;
  disposition: Disposition;
  space: string;
  createdAt: Date;
  updatedAt: Date;
  lastWriteAt: Date | null;
  memoryCount: number;
  usage: BankUsage;
  /** Whether changes to the bank's memories append versions to their history. */
  history: BankHistory;
  /** Days a memory retained without an expiry of its own is kept (its expires_at); null: kept until deleted. */
  retentionDays: number | null;
}

export const BANK_HISTORY = ['on', 'off'] as const;
export type BankHistory = (typeof BANK_HISTORY)[number];

/** LLM tokens spent on a bank's behalf (fact extraction, reflect). */
export interface BankUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface BankStats {
  bankId: string;
  memoriesByType: Record<string, number>;
  lastWriteAt: Date | null;
  usage: BankUsage;
}

export interface BankChanges {
  name?: string | undefined;
  mission?: string | undefined;
  disposition?: Partial<Disposition> | undefined;
  space?: string | undefined;
  history?: BankHistory | undefined;
  /** null removes the bank's retention; undefined keeps it. */
  retentionDays?: number | null | undefined;
}

interface BankRow {
  bank_id: string;
  name: string;
  mission: string;
  disposition: Disposition;
  space: string;
  created_at: Date | string;
  updated_at: Date | string;
  last_write_at: Date | string | null;
  memory_count: number | string;
  tokens_input: number | string;
  tokens_output: number | string;
  history: string;
  retention_days: number | null;
}

const DEFAULT_DISPOSITION: Disposition = { skepticism: 3, literalism: 3, empathy: 3 };

const BANK_COLUMNS = `b.bank_id, b.name, b.mission, b.disposition, b.space, b.created_at, b.updated_at,
  b.last_write_at, b.tokens_input, b.tokens_output, b.history, b.retention_days,
  (SELECT count(*) FROM memories m WHERE m.tenant = b.tenant AND m.bank_id = b.bank_id) AS memory_count`;
const SELECT_BANK = `SELECT ${BANK_COLUMNS} FROM banks b`;
/** The bank list's order: most recently written first. */
const BANK_LIST_KEY = 'COALESCE(b.last_write_at, b.updated_at)';

function toBank(r: BankRow): Bank {
  return {
    bankId: r.bank_id,
    name: r.name,
    mission: r.mission,
    disposition: { ...DEFAULT_DISPOSITION, ...r.disposition },
    space: r.space,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    lastWriteAt: r.last_write_at === null ? null : new Date(r.last_write_at),
    memoryCount: Number(r.memory_count),
    usage: { inputTokens: Number(r.tokens_input), outputTokens: Number(r.tokens_output) },
    history: r.history === 'off' ? 'off' : 'on',
    retentionDays: r.retention_days,
  };
}

/**
 * Creates the bank on first write (banks are implicit), stamps its last write and takes the retain's number in the
 * bank's change log (see takeBankChange).
 */
export async function touchBank(db: Queryable, tenant: string, bankId: string): Promise<void> {
  await db.query('SELECT mnemos_bank_change($1, $2, true)', [tenant, bankId]);
}

/**
 * Takes the transaction's number in the bank's change log before it changes any memory (the memories trigger stamps
 * it on rows and tombstones): the bank's open number (migration 014). A change to existing memories locks the bank's
 * row for itself, before any memory row, the order every writer of the bank follows, so two writers never wait on
 * each other in a cycle; retains only share it. Undefined when the bank does not exist.
 */
export async function takeBankChange(db: Queryable, tenant: string, bankId: string): Promise<number | undefined> {
  const [row] = await db.query<{ taken: string | number | null }>('SELECT mnemos_bank_change($1, $2, false) AS taken', [
    tenant,
    bankId,
  ]);
  return row?.taken === null || row?.taken === undefined ? undefined : Number(row.taken);
}

/**
 * The partition that holds the bank's memories (migration 019): 0, the shared one, until the bank is moved into one of
 * its own. Read after the retain's share lock on the bank's row (touchBank), so a move cannot happen in between.
 */
export async function bankPart(q: Queryable, tenant: string, bankId: string): Promise<number> {
  const [row] = await q.query<{ part: number }>('SELECT part FROM banks WHERE tenant = $1 AND bank_id = $2', [
    tenant,
    bankId,
  ]);
  return row?.part ?? 0;
}

/** The bank's retention in days (retention_days), or null when it keeps memories or does not exist yet. */
export async function bankRetentionDays(db: Queryable, tenant: string, bankId: string): Promise<number | null> {
  const [row] = await db.query<{ retention_days: number | null }>(
    'SELECT retention_days FROM banks WHERE tenant = $1 AND bank_id = $2',
    [tenant, bankId],
  );
  return row?.retention_days ?? null;
}

export async function getBank(db: Queryable, tenant: string, bankId: string): Promise<Bank | undefined> {
  const rows = await db.query<BankRow>(`${SELECT_BANK} WHERE b.tenant = $1 AND b.bank_id = $2`, [tenant, bankId]);
  return rows[0] ? toBank(rows[0]) : undefined;
}

/** PUT: create or update (upsert), keeping fields the body does not name. */
export async function putBank(db: Queryable, tenant: string, bankId: string, c: BankChanges): Promise<Bank> {
  await db.query(
    `INSERT INTO banks (tenant, bank_id, name, mission, disposition, space, history, retention_days)
     VALUES ($1, $2, COALESCE($3, $2), COALESCE($4, ''), $5::jsonb, COALESCE($6, 'default'), COALESCE($8, 'on'),
       $10::int)
     ON CONFLICT (tenant, bank_id) DO UPDATE SET
       name = COALESCE($3, banks.name), mission = COALESCE($4, banks.mission),
       disposition = banks.disposition || $7::jsonb, space = COALESCE($6, banks.space),
       history = COALESCE($8, banks.history),
       retention_days = CASE WHEN $9::boolean THEN $10::int ELSE banks.retention_days END, updated_at = now()`,
    bankParams(tenant, bankId, c),
  );
  return (await getBank(db, tenant, bankId))!;
}

/** PATCH: update an existing bank; undefined when it does not exist. */
export async function patchBank(
  db: Queryable,
  tenant: string,
  bankId: string,
  c: BankChanges,
): Promise<Bank | undefined> {
  const rows = await db.query(
    `UPDATE banks SET name = COALESCE($3, name), mission = COALESCE($4, mission),
       disposition = disposition || $7::jsonb, space = COALESCE($6, space), history = COALESCE($8, history),
       retention_days = CASE WHEN $9::boolean THEN $10::int ELSE retention_days END, updated_at = now()
     WHERE tenant = $1 AND bank_id = $2 AND $5::jsonb IS NOT NULL RETURNING bank_id`,
    bankParams(tenant, bankId, c),
  );
  return rows.length === 0 ? undefined : getBank(db, tenant, bankId);
}

function bankParams(tenant: string, bankId: string, c: BankChanges): SqlParam[] {
  const disposition = { ...DEFAULT_DISPOSITION, ...(c.disposition ?? {}) };
  return [
    tenant,
    bankId,
    c.name ?? null,
    c.mission ?? null,
    JSON.stringify(disposition),
    c.space ?? null,
    JSON.stringify(c.disposition ?? {}),
    c.history ?? null,
    c.retentionDays !== undefined,
    c.retentionDays ?? null,
  ];
}

/**
 * Erases the bank and everything derived from it. Answers how many memories went. The bank's row goes first: its
 * change log ends with it, so its memories leave no tombstones (an engine holding a copy sees the bank gone, or
 * created again under another change_log_id, and drops the copy), and the tombstones it had go too.
 */
export async function deleteBank(db: Queryable, tenant: string, bankId: string): Promise<number> {
  await db.query('DELETE FROM banks WHERE tenant = $1 AND bank_id = $2', [tenant, bankId]);
  const gone = await db.query<{ id: string }>('DELETE FROM memories WHERE tenant = $1 AND bank_id = $2 RETURNING id', [
    tenant,
    bankId,
  ]);
  await db.query('DELETE FROM memory_tombstones WHERE tenant = $1 AND bank_id = $2', [tenant, bankId]);
  return gone.length;
}

/** A bank's place in the list order: its last write (else update) as Postgres's text, then its id. */
export interface BankListKey {
  at: string;
  bankId: string;
}

/** A page of banks, most recently written first, with the total and the key of the page's last bank. */
export async function listBanks(
  db: Queryable,
  tenant: string,
  q: string | undefined,
  page: { limit: number; offset: number; after: BankListKey | undefined },
): Promise<{ banks: Bank[]; total: number; last: BankListKey | undefined }> {
  const params: SqlParam[] = [tenant];
  let where = "b.tenant = $1 AND b.bank_id <> ''";
  if (q !== undefined && q !== '') {
    params.push(`%${q.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`);
    where += ` AND (b.bank_id ILIKE $2 OR b.name ILIKE $2)`;
  }
  const [count] = await db.query<{ n: number | string }>(`SELECT count(*) AS n FROM banks b WHERE ${where}`, params);
  const pageParams = [...params];
  let pageWhere = where;
  if (page.after !== undefined) {
    pageParams.push(page.after.at, page.after.bankId);
    const [at, id] = [`$${pageParams.length - 1}::timestamptz`, `$${pageParams.length}`];
    pageWhere += ` AND (${BANK_LIST_KEY} < ${at} OR (${BANK_LIST_KEY} = ${at} AND b.bank_id > ${id}))`;
  }
  const rows = await db.query<BankRow & { key_at: string }>(
    `SELECT ${BANK_COLUMNS}, ${BANK_LIST_KEY}::text AS key_at FROM banks b WHERE ${pageWhere}
     ORDER BY ${BANK_LIST_KEY} DESC, b.bank_id
     LIMIT $${pageParams.length + 1}::int OFFSET $${pageParams.length + 2}::bigint`,
    [...pageParams, page.limit, page.offset],
  );
  const end = rows.at(-1);
  return {
    banks: rows.map(toBank),
    total: Number(count?.n ?? 0),
    last: end && { at: end.key_at, bankId: end.bank_id },
  };
}

export async function addBankUsage(
  db: Queryable,
  tenant: string,
  bankId: string,
  input: number,
  output: number,
): Promise<void> {
  await db.query(
    'UPDATE banks SET tokens_input = tokens_input + $3, tokens_output = tokens_output + $4 WHERE tenant = $1 AND bank_id = $2',
    [tenant, bankId, input, output],
  );
}

/** Memories of a bank by type, with its last write and LLM usage. */
export async function bankStats(db: Queryable, tenant: string, bankId: string): Promise<BankStats> {
  const rows = await db.query<{ type: string; n: string | number }>(
    'SELECT type, count(*) AS n FROM memories WHERE tenant = $1 AND bank_id = $2 GROUP BY type',
    [tenant, bankId],
  );
  const bank = await getBank(db, tenant, bankId);
  return {
    bankId,
    memoriesByType: Object.fromEntries(rows.map((r) => [r.type, Number(r.n)])),
    lastWriteAt: bank?.lastWriteAt ?? null,
    usage: bank?.usage ?? { inputTokens: 0, outputTokens: 0 },
  };
}
