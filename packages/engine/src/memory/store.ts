import sql, { join, raw, Sql } from 'sql-template-tag';
import type { Database, Queryable, Transaction } from '../db/database.js';
import { vectorCopyData } from '../db/vector-copy.js';
import { bankPart, takeBankChange } from './bank-store.js';
import type { BodyCodec, KeywordQuery, SealedBody } from '../crypto/codec.js';
import { IntegrityError } from '../crypto/envelope.js';
import { documentTsvector } from '../keywords/text-search.js';
import type { Filter } from '../filters/ast.js';
import { filterSql } from '../filters/sql.js';
import { vectorLiteral } from './vector-literal.js';
import { MEMORY_COLUMNS, rowToMemory, type MemoryReader, type MemoryRow } from './rows.js';
import { run } from './sql.js';
import { eventLoopSlicer } from '../util/yield.js';
import type { Memory, Metadata, NewMemory, Partition } from './types.js';
import type { Validity } from '../filters/validity.js';
import { unexpiredSql, validitySql } from './validity-sql.js';
import { recordEntities, replaceMentions } from './entity-store.js';

/** From this many memories in one insert, vectors go to the embedded database in binary (see insert). */
const BINARY_VECTORS_FROM = 3;
/** Rows per multi-row INSERT: one round trip per chunk instead of one per memory. */
const ROWS_PER_INSERT = 100;

export interface ListFilter {
  tenant: string;
  bankId: string;
  space: string | undefined;
  type: string | undefined;
  q: string | undefined;
  tags: string[] | undefined;
  since: Date | undefined;
  until: Date | undefined;
  documentId: string | undefined;
  state: string | undefined;
  /** The filter expression (docs/api.md, "Filters"). */
  filter?: Filter | undefined;
  limit: number;
  offset: number;
  /** Start after this row of the list order (keyset pagination); undefined starts at the top. */
  after: MemoryListKey | undefined;
  /** Which memories pass by their validity interval (filters/validity.ts). */
  validity: Validity;
}

/**
 * A memory's place in the list order: its date (occurred, else created), creation time and position in its retain
 * call, with the id as the last tie-break. Times are Postgres's own text, which keeps their microseconds.
 */
export interface MemoryListKey {
  at: string;
  createdAt: string;
  seq: number;
  id: string;
}

export interface MemoryPatch {
  text?: string;
  embedding?: Float32Array;
  tokenCount?: number;
  contentHash?: string;
  tags?: string[];
  metadata?: Metadata;
  context?: string | null;
  state?: 'valid' | 'invalidated';
  occurredAt?: Date | null;
  validFrom?: Date | null;
  validTo?: Date | null;
  expiresAt?: Date | null;
}

/** The columns an import restores as its export had them; a retain leaves them to their defaults. */
export interface RestoredColumns {
  createdAt: Date;
  updatedAt: Date;
  state: 'valid' | 'invalidated';
  validFrom: Date | null;
  validTo: Date | null;
  supersededBy: string | null;
}

/**
 * The memories table, read and written through the body codec (encryption at rest or the plaintext no-op), which it
 * is given at construction. Methods that take a Queryable run on it, so a caller's transaction includes them.
 */
export class MemoryStore implements MemoryReader {
  constructor(
    readonly db: Database,
    readonly codec: BodyCodec,
  ) {}

  /**
   * Rows as memories, decrypted through the body codec. Rows that fail to decrypt (tampered, moved) were reported by
   * the codec and are left out: they are never returned.
   */
  async open(q: Queryable, tenant: string, rows: readonly MemoryRow[]): Promise<Memory[]> {
    const bodies = await this.codec.openRows(q, tenant, rows);
    const out: Memory[] = [];
    rows.forEach((row, i) => {
      const body = bodies[i];
      if (body !== undefined) out.push(rowToMemory(row, body));
    });
    return out;
  }

  /**
   * Ids already stored for these content hashes in the partition (retain is idempotent on identical content). Hashes
   * are the plain SHA-256 of the content; with encryption the stored ones are keyed (see the body codec).
   */
  async findByHashes(q: Queryable, p: Partition, hashes: string[]): Promise<Map<string, string>> {
    if (hashes.length === 0) return new Map();
    const stored = await this.codec.dedupHashes(q, p.tenant, p.bankId, hashes);
    if (stored.size === 0) return new Map();
    const rows = await q.query<{ id: string; content_hash: string }>(
      `SELECT id, content_hash FROM memories
       WHERE tenant = $1 AND bank_id = $2 AND space = $3 AND source_id IS NULL AND content_hash = ANY($4::text[])`,
      [p.tenant, p.bankId, p.space, [...stored.keys()]],
    );
    return new Map(rows.map((r) => [stored.get(r.content_hash) ?? r.content_hash, r.id]));
  }

  /** Inserts memories; a concurrent retain of the same content wins the race and its id is returned instead. */
  async insert(
    tx: Queryable,
    p: Partition,
    items: ReadonlyArray<NewMemory & { embedding: Float32Array } & Partial<RestoredColumns>>,
  ): Promise<string[]> {
    if (items.length === 0) return [];
    // With encryption: text/context/metadata go into body_enc, fts is the blind index, content_hash is keyed.
    const bank = await this.codec.forWrite(tx, p.tenant, p.bankId);
    const part = await bankPart(tx, p.tenant, p.bankId);
    // Writers into one bank run side by side, and a row whose content another open writer has stored waits for that
    // writer: rows go in by their stored hash, so two writers of the same contents wait in one order, never on each
    // other (which the database would end as a deadlock).
    const ordered = items
      .map((m) => ({ m, hash: bank.dedupHash(m.contentHash) }))
      .sort((x, y) => (x.hash < y.hash ? -1 : x.hash > y.hash ? 1 : 0));
    const inserted = new Set<string>();
    const pause = eventLoopSlicer();
    // Embedded: vectors go in binary through a session temp table (emptied at commit) instead of as text to parse. For
    // a few memories the text is cheaper: emptying the temp table at commit costs file truncations in PGlite's file
    // system, more than parsing one or two vectors (docs/benchmarks.md).
    const copyFrom =
      ordered.length >= BINARY_VECTORS_FROM ? (tx as Partial<Transaction>).copyFrom?.bind(tx) : undefined;
    if (copyFrom) {
      await tx.query(
        'CREATE TEMP TABLE IF NOT EXISTS mnemos_vectors_in (ord int PRIMARY KEY, embedding vector) ' +
          'ON COMMIT DELETE ROWS',
      );
    }
    for (let start = 0; start < ordered.length; start += ROWS_PER_INSERT) {
      const chunk = ordered.slice(start, start + ROWS_PER_INSERT);
      if (copyFrom) {
        const data = vectorCopyData(
          chunk.map(({ m }) => m.embedding),
          start,
        );
        await copyFrom("COPY mnemos_vectors_in (ord, embedding) FROM '/dev/blob' WITH (FORMAT binary)", data);
      }
      const rows: Sql[] = [];
      for (const [i, { m, hash }] of chunk.entries()) {
        const { text, context, metadata, entities } = m;
        const sealed = await bank.seal(m.id, { text, context, metadata, entities });
        const vector = copyFrom
          ? sql`(SELECT embedding FROM mnemos_vectors_in WHERE ord = ${start + i}::int)`
          : sql`${vectorLiteral(m.embedding)}::vector`;
        rows.push(sql`(${m.id}::uuid, ${p.tenant}, ${p.bankId}, ${p.space}, ${m.type}, ${sealed.text}, ${sealed.context},
          ${JSON.stringify(sealed.metadata)}::jsonb, ${m.tags}::text[], ${sealed.entities}::text[], ${m.documentId},
          ${m.sourceId}::uuid, ${m.batchId}::uuid, ${m.seq}::int, ${hash},
          ${m.tokenCount}::int, ${m.occurredAt}::timestamptz, ${m.expiresAt ?? null}::timestamptz, ${vector}, ${sealed.bodyEnc}::bytea,
          COALESCE(${sealed.fts}::tsvector, ${documentTsvector(sql`${sealed.text}::text`)}),
          COALESCE(${m.createdAt ?? null}::timestamptz, now()), COALESCE(${m.updatedAt ?? null}::timestamptz, now()),
          ${m.state ?? 'valid'}, ${m.validFrom ?? null}::timestamptz, ${m.validTo ?? null}::timestamptz,
          ${m.supersededBy ?? null}::uuid, ${part}::int)`);
        // Sealing a row under encryption (its blind index) takes up to a few milliseconds; a hundred of them in a row
        // would hold the event loop.
        await pause();
      }
      const returned = await run<{ id: string }>(
        tx,
        sql`
        INSERT INTO memories (id, tenant, bank_id, space, type, text, context, metadata, tags, entities, document_id,
          source_id, batch_id, seq, content_hash, token_count, occurred_at, expires_at, embedding, body_enc, fts, created_at,
          updated_at, state, valid_from, valid_to, superseded_by, part)
        VALUES ${join(rows, ',\n')}
        ON CONFLICT (tenant, bank_id, space, content_hash, part) WHERE source_id IS NULL DO NOTHING
        RETURNING id`,
      );
      for (const r of returned) inserted.add(r.id);
    }
    await recordEntities(
      tx,
      bank,
      p.tenant,
      p.bankId,
      items.filter((m) => inserted.has(m.id)),
    );
    // Rows skipped by ON CONFLICT lost a race with a concurrent retain of the same content: answer that row's id.
    const lost = items.filter((m) => !inserted.has(m.id));
    const existing = await this.findByHashes(
      tx,
      p,
      lost.map((m) => m.contentHash),
    );
    return items.map((m) => (inserted.has(m.id) ? m.id : (existing.get(m.contentHash) ?? m.id)));
  }

  async get(tenant: string, bankId: string, id: string, q: Queryable = this.db): Promise<Memory | undefined> {
    const rows = await q.query<MemoryRow>(
      `SELECT ${MEMORY_COLUMNS} FROM memories WHERE tenant = $1 AND bank_id = $2 AND id = $3`,
      [tenant, bankId, id],
    );
    return rows[0] ? (await this.open(q, tenant, rows))[0] : undefined;
  }

  /** A page of memories in list order, with the total matching the filter and the key of the page's last row. */
  async list(f: ListFilter): Promise<{ items: Memory[]; total: number; last: MemoryListKey | undefined }> {
    const where: Sql[] = [sql`tenant = ${f.tenant}`, sql`bank_id = ${f.bankId}`];
    if (f.space !== undefined) where.push(sql`space = ${f.space}`);
    if (f.type !== undefined) where.push(sql`type = ${f.type}`);
    if (f.q !== undefined && f.q.trim() !== '' && !this.codec.encrypted) {
      where.push(sql`(fts @@ plainto_tsquery('english', ${f.q}) OR text ILIKE '%' || ${f.q} || '%')`);
    } else if (f.q !== undefined && f.q.trim() !== '') {
      // Encrypted: every term must match the blind index (no substring match: there is no plaintext to scan).
      const tsq = await this.codec.keywordQuery(this.db, f.tenant, [f.bankId], f.q, 'all');
      where.push(tsq === undefined ? sql`false` : keywordMatch(tsq));
    }
    if (f.tags !== undefined && f.tags.length > 0) where.push(sql`tags && ${f.tags}::text[]`);
    if (f.since !== undefined) where.push(sql`COALESCE(occurred_at, created_at) >= ${f.since}`);
    if (f.until !== undefined) where.push(sql`COALESCE(occurred_at, created_at) < ${f.until}`);
    if (f.documentId !== undefined) where.push(sql`document_id = ${f.documentId}`);
    if (f.state !== undefined) where.push(sql`state = ${f.state}`);
    where.push(validitySql(f.validity));
    if (f.filter !== undefined) where.push(filterSql(f.filter));
    const condition = join(where, ' AND ');
    const counted = sql`SELECT count(*) AS n FROM memories WHERE ${condition}`;
    const [count] = await run<{ n: number | string }>(this.db, counted);
    const page = f.after === undefined ? condition : sql`${condition} AND ${afterKey(f.after)}`;
    const rows = await run<MemoryRow & { key_at: string; key_created: string; seq: number }>(
      this.db,
      sql`SELECT ${raw(MEMORY_COLUMNS)}, seq, COALESCE(occurred_at, created_at)::text AS key_at,
        created_at::text AS key_created
      FROM memories WHERE ${page}
      ORDER BY COALESCE(occurred_at, created_at) DESC, created_at DESC, seq DESC, id
      LIMIT ${f.limit}::int OFFSET ${f.offset}::bigint`,
    );
    const end = rows.at(-1);
    const last = end && { at: end.key_at, createdAt: end.key_created, seq: end.seq, id: end.id };
    return { items: await this.open(this.db, f.tenant, rows), total: Number(count?.n ?? 0), last };
  }

  /** Changes a memory that has not expired at `now`; undefined when there is none. */
  async update(
    tenant: string,
    bankId: string,
    id: string,
    patch: MemoryPatch,
    now = new Date(),
  ): Promise<Memory | undefined> {
    const touchesBody = patch.text !== undefined || patch.context !== undefined || patch.metadata !== undefined;
    const renames = patch.text !== undefined || patch.metadata !== undefined;
    return this.db.transaction(async (tx) => {
      const memory = await this.updateIn(tx, tenant, bankId, id, patch, touchesBody, now);
      if (memory !== undefined && renames) {
        await replaceMentions(tx, await this.codec.forWrite(tx, tenant, bankId), tenant, bankId, memory);
      }
      return memory;
    });
  }

  private async updateIn(
    tx: Queryable,
    tenant: string,
    bankId: string,
    id: string,
    patch: MemoryPatch,
    touchesBody: boolean,
    now: Date,
  ): Promise<Memory | undefined> {
    // The bank's change number first: the bank's row is locked before the memory's, as every writer does.
    await takeBankChange(tx, tenant, bankId);
    if (!this.codec.encrypted || (!touchesBody && patch.contentHash === undefined)) {
      return this.applyUpdate(tx, tenant, bankId, id, patch, now);
    }
    // Encrypted: the body is one ciphertext, so an edit reads it, merges the change and seals it again.
    const [row] = await run<MemoryRow>(
      tx,
      sql`SELECT ${raw(MEMORY_COLUMNS)} FROM memories
          WHERE tenant = ${tenant} AND bank_id = ${bankId} AND id = ${id} AND ${unexpiredSql(now)} FOR UPDATE`,
    );
    if (!row) return undefined;
    const [current] = await this.open(tx, tenant, [row]);
    if (!current) throw new IntegrityError(`memory ${id} failed to decrypt (tampered or moved); it was not changed`);
    const bank = await this.codec.forWrite(tx, tenant, bankId);
    const sealed = await bank.seal(id, {
      text: patch.text ?? current.text,
      context: patch.context !== undefined ? patch.context : current.context,
      metadata: patch.metadata ?? current.metadata,
      entities: current.entities,
    });
    return this.applyUpdate(
      tx,
      tenant,
      bankId,
      id,
      {
        ...patch,
        ...(patch.contentHash !== undefined ? { contentHash: bank.dedupHash(patch.contentHash) } : {}),
        sealed,
      },
      now,
    );
  }

  private async applyUpdate(
    q: Queryable,
    tenant: string,
    bankId: string,
    id: string,
    patch: MemoryPatch & { sealed?: SealedBody },
    now: Date,
  ): Promise<Memory | undefined> {
    const rows = await run<MemoryRow>(
      q,
      sql`UPDATE memories SET ${join(patchSets(patch), ', ')}
      WHERE tenant = ${tenant} AND bank_id = ${bankId} AND id = ${id} AND ${unexpiredSql(now)}
      RETURNING ${raw(MEMORY_COLUMNS)}`,
    );
    if (rows[0] && patch.expiresAt !== undefined) {
      await followSourceExpiry(q, { tenant, bankId, space: undefined }, [id], patch.expiresAt);
    }
    return rows[0] ? (await this.open(q, tenant, rows))[0] : undefined;
  }

  /**
   * The memories of `ids` in the bank (and space, when given) not expired at `now`, in no order; rows that fail to
   * open are left out.
   */
  async getMany(partition: BankSelection, ids: readonly string[], now = new Date()): Promise<Memory[]> {
    if (ids.length === 0) return [];
    const rows = await run<MemoryRow>(
      this.db,
      sql`SELECT ${raw(MEMORY_COLUMNS)} FROM memories
      WHERE ${selectionSql(partition)} AND id = ANY(${[...new Set(ids)]}::uuid[]) AND ${unexpiredSql(now)}`,
    );
    return this.open(this.db, partition.tenant, rows);
  }

  /**
   * Applies one change to every memory of the bank (and space) that `which` selects (by id or by filter), in one transaction that takes the
   * bank's change first (so every in-memory copy of the bank reloads, and the history trigger appends a version per
   * row). Answers how many memories changed.
   */
  async updateMany(
    partition: BankSelection,
    which: { ids: readonly string[] } | { filter: Filter },
    patch: MemoryPatch,
    now = new Date(),
  ): Promise<number> {
    const chosen = 'filter' in which ? filterSql(which.filter) : sql`id = ANY(${[...which.ids]}::uuid[])`;
    const where = sql`${selectionSql(partition)} AND ${chosen} AND ${unexpiredSql(now)}`;
    return this.db.transaction(async (tx) => {
      await takeBankChange(tx, partition.tenant, partition.bankId);
      if (!this.codec.encrypted || patch.metadata === undefined) {
        const rows = await run<{ id: string }>(
          tx,
          sql`UPDATE memories SET ${join(patchSets(patch), ', ')} WHERE ${where} RETURNING id`,
        );
        if (patch.expiresAt !== undefined) {
          await followSourceExpiry(
            tx,
            partition,
            rows.map((r) => r.id),
            patch.expiresAt,
          );
        }
        return rows.length;
      }
      // Encrypted: metadata lives in each row's sealed body, so each row is opened, changed and sealed again.
      const rows = await run<MemoryRow>(
        tx,
        sql`SELECT ${raw(MEMORY_COLUMNS)} FROM memories WHERE ${where} ORDER BY id FOR UPDATE`,
      );
      const bank = await this.codec.forWrite(tx, partition.tenant, partition.bankId);
      const pause = eventLoopSlicer();
      let changed = 0;
      for (const current of await this.open(tx, partition.tenant, rows)) {
        const sealed = await bank.seal(current.id, {
          text: current.text,
          context: current.context,
          metadata: patch.metadata,
          entities: current.entities,
        });
        if (await this.applyUpdate(tx, partition.tenant, partition.bankId, current.id, { ...patch, sealed }, now))
          changed++;
        await pause();
      }
      return changed;
    });
  }
}

/** The facts read from the memories of `sourceIds` take their sources' new expiry: they are forgotten with them. */
async function followSourceExpiry(
  q: Queryable,
  { tenant, bankId }: BankSelection,
  sourceIds: readonly string[],
  expiresAt: Date | null,
): Promise<void> {
  if (sourceIds.length === 0) return;
  await run(
    q,
    sql`UPDATE memories SET expires_at = ${expiresAt}::timestamptz, updated_at = now()
    WHERE tenant = ${tenant} AND bank_id = ${bankId} AND source_id = ANY(${[...sourceIds]}::uuid[])`,
  );
}

/** A bank, or one space of it when `space` is given. */
export interface BankSelection {
  tenant: string;
  bankId: string;
  space: string | undefined;
}

export function selectionSql({ tenant, bankId, space }: BankSelection): Sql {
  const inSpace = space === undefined ? sql`` : sql` AND space = ${space}`;
  return sql`tenant = ${tenant} AND bank_id = ${bankId}${inSpace}`;
}

/** The SET list of an update: the columns a patch names, and updated_at. */
function patchSets(patch: MemoryPatch & { sealed?: SealedBody }): Sql[] {
  const sets: Sql[] = [sql`updated_at = now()`];
  if (patch.sealed !== undefined) {
    sets.push(sql`text = NULL, context = NULL, metadata = '{}'::jsonb`);
    sets.push(sql`entities = ${patch.sealed.entities}::text[]`);
    sets.push(sql`body_enc = ${patch.sealed.bodyEnc}`);
    sets.push(sql`fts = ${patch.sealed.fts ?? ''}::tsvector`);
  } else {
    if (patch.text !== undefined) {
      sets.push(sql`text = ${patch.text}`, sql`fts = ${documentTsvector(sql`${patch.text}::text`)}`);
    }
    if (patch.metadata !== undefined) sets.push(sql`metadata = ${JSON.stringify(patch.metadata)}::jsonb`);
    if (patch.context !== undefined) sets.push(sql`context = ${patch.context}`);
  }
  if (patch.embedding !== undefined) sets.push(sql`embedding = ${vectorLiteral(patch.embedding)}::vector`);
  if (patch.tokenCount !== undefined) sets.push(sql`token_count = ${patch.tokenCount}`);
  if (patch.contentHash !== undefined) sets.push(sql`content_hash = ${patch.contentHash}`);
  if (patch.tags !== undefined) sets.push(sql`tags = ${patch.tags}::text[]`);
  if (patch.state !== undefined) sets.push(sql`state = ${patch.state}`);
  if (patch.occurredAt !== undefined) sets.push(sql`occurred_at = ${patch.occurredAt}`);
  if (patch.validFrom !== undefined) sets.push(sql`valid_from = ${patch.validFrom}`);
  if (patch.validTo !== undefined) sets.push(sql`valid_to = ${patch.validTo}`);
  if (patch.expiresAt !== undefined) sets.push(sql`expires_at = ${patch.expiresAt}::timestamptz`);
  // Current again: no memory replaces it any more.
  if (patch.validTo === null) sets.push(sql`superseded_by = NULL`);
  return sets;
}

/** `fts` matching the codec's tsquery, its value bound in the place the codec's SQL gives it. */
function keywordMatch(tsq: KeywordQuery): Sql {
  const [before, after] = tsq.sql('\u0000').split('\u0000');
  return new Sql([`fts @@ ${before ?? ''}`, after ?? ''], [tsq.value]);
}

/**
 * Hard delete; derived facts go with their source (ON DELETE CASCADE). Answers how many rows went. The bank's change
 * number is taken first (see takeBankChange); the tombstones carry it.
 */
export function deleteMemory(db: Database, tenant: string, bankId: string, id: string): Promise<number> {
  return deleteMemories(db, tenant, bankId, [id]);
}

/** `deleteMemory` for several memories of one bank, in one transaction (the expiry job deletes this way). */
export function deleteMemories(db: Database, tenant: string, bankId: string, ids: readonly string[]): Promise<number> {
  return db.transaction(async (tx) => {
    await takeBankChange(tx, tenant, bankId);
    const rows = await tx.query<{ id: string }>(
      `WITH RECURSIVE doomed AS (
         SELECT id FROM memories WHERE tenant = $1 AND bank_id = $2 AND id = ANY($3::uuid[])
         UNION SELECT m.id FROM memories m JOIN doomed d ON m.tenant = $1 AND m.source_id = d.id
       )
       DELETE FROM memories WHERE tenant = $1 AND id IN (SELECT id FROM doomed) RETURNING id`,
      [tenant, bankId, [...ids]],
    );
    return rows.length;
  });
}

/** Up to `limit` memories expired at `now`, soonest expired first, by bank (the partial index on expires_at serves it). */
export async function expiredMemories(
  db: Queryable,
  now: Date,
  limit: number,
): Promise<Array<{ tenant: string; bankId: string; ids: string[] }>> {
  const due = await db.query<{ tenant: string; bank_id: string; id: string }>(
    `SELECT tenant, bank_id, id::text AS id FROM memories
     WHERE expires_at <= $1::timestamptz ORDER BY expires_at LIMIT $2::int`,
    [now, limit],
  );
  const byBank = new Map<string, { tenant: string; bankId: string; ids: string[] }>();
  for (const row of due) {
    const key = `${row.tenant}\u0000${row.bank_id}`;
    const bank = byBank.get(key) ?? { tenant: row.tenant, bankId: row.bank_id, ids: [] };
    bank.ids.push(row.id);
    byBank.set(key, bank);
  }
  return [...byBank.values()];
}

export function clearMemories(
  db: Database,
  tenant: string,
  bankId: string,
  space: string | undefined,
  type: string | undefined,
): Promise<number> {
  const where = [sql`tenant = ${tenant}`, sql`bank_id = ${bankId}`];
  if (space !== undefined) where.push(sql`space = ${space}`);
  if (type !== undefined) where.push(sql`type = ${type}`);
  return db.transaction(async (tx) => {
    await takeBankChange(tx, tenant, bankId);
    const rows = await run<{ id: string }>(tx, sql`DELETE FROM memories WHERE ${join(where, ' AND ')} RETURNING id`);
    return rows.length;
  });
}

/**
 * Deletes the bank's memories (of one space, when given) that pass `filter`, in one transaction (the bank's change is taken, so every in-memory
 * copy of the bank reloads); a dry run counts them and changes nothing. Answers how many.
 */
export function deleteWhere(db: Database, partition: BankSelection, filter: Filter, dryRun: boolean): Promise<number> {
  const { tenant, bankId } = partition;
  const where = sql`${selectionSql(partition)} AND ${filterSql(filter)}`;
  if (dryRun) {
    return run<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM memories WHERE ${where}`).then(
      (r) => r[0]?.n ?? 0,
    );
  }
  return db.transaction(async (tx) => {
    await takeBankChange(tx, tenant, bankId);
    const rows = await run<{ id: string }>(tx, sql`DELETE FROM memories WHERE ${where} RETURNING id`);
    return rows.length;
  });
}

/** Rows after `key` in the list order (date, creation time and position descending, then id ascending). */
function afterKey(key: MemoryListKey): Sql {
  const row = sql`(COALESCE(occurred_at, created_at), created_at, seq)`;
  const at = sql`(${key.at}::timestamptz, ${key.createdAt}::timestamptz, ${key.seq}::int)`;
  return sql`(${row} < ${at} OR (${row} = ${at} AND id > ${key.id}::uuid))`;
}
