import sql, { join, raw, type Sql } from 'sql-template-tag';
import type { Queryable } from '../db/database.js';
import type { BankCodec, BodyCodec } from '../crypto/codec.js';
import { mentionsOf, type EntityKind, type Mention } from './mentions.js';
import { MEMORY_COLUMNS, type MemoryRow } from './rows.js';
import { run } from './sql.js';
import type { Metadata } from './types.js';
import { validFromSql } from './validity-sql.js';

/** What the entities table needs of a memory just written. */
export interface NamingMemory {
  id: string;
  text: string;
  metadata: Readonly<Metadata>;
  entities: readonly string[];
  /** Facts carry the LLM's entities; retained memories the caller's and the cheap extractor's. */
  sourceId: string | null;
}

/** The names a memory gives its entities: the extractor's and the caller's for what was retained, the LLM's for facts. */
export function namesOf(m: NamingMemory): Mention[] {
  const given = m.entities.map((name) => name.trim()).filter((name) => name !== '');
  if (m.sourceId !== null) return given.map((name) => ({ name, kind: 'extracted' }));
  return [...mentionsOf(m.text, m.metadata), ...given.map((name): Mention => ({ name, kind: 'given' }))];
}

const ROWS_PER_INSERT = 500;

async function insertNames(
  tx: Queryable,
  bank: BankCodec,
  tenant: string,
  bankId: string,
  named: ReadonlyArray<{ id: string; mentions: readonly Mention[] }>,
): Promise<void> {
  const rows: Sql[] = [];
  for (const { id, mentions } of named) {
    for (const m of mentions) {
      const sealed = bank.sealEntity(m.name);
      rows.push(
        sql`(${tenant}, ${bankId}, ${id}::uuid, ${sealed.key}, ${sealed.name}, ${sealed.nameEnc}::bytea, ${m.kind})`,
      );
    }
  }
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    await run(
      tx,
      // An entity row names its memory's partition (migration 018), read from the memory it names.
      sql`INSERT INTO memory_entities (tenant, bank_id, memory_id, key, name, name_enc, kind, part)
      SELECT v.tenant, v.bank_id, v.memory_id, v.key, v.name, v.name_enc, v.kind, m.part
      FROM (VALUES ${join(rows.slice(start, start + ROWS_PER_INSERT), ',\n')})
        v (tenant, bank_id, memory_id, key, name, name_enc, kind)
      JOIN memories m ON m.tenant = v.tenant AND m.id = v.memory_id
      ON CONFLICT DO NOTHING`,
    );
  }
}

/** Records the entities of memories just inserted, in their transaction. */
export function recordEntities(
  tx: Queryable,
  bank: BankCodec,
  tenant: string,
  bankId: string,
  memories: readonly NamingMemory[],
): Promise<void> {
  return insertNames(
    tx,
    bank,
    tenant,
    bankId,
    memories.map((m) => ({ id: m.id, mentions: namesOf(m) })),
  );
}

/** A memory's text changed: the names the cheap extractor found in the old text give way to those of the new. */
export async function replaceMentions(
  tx: Queryable,
  bank: BankCodec,
  tenant: string,
  bankId: string,
  memory: NamingMemory,
): Promise<void> {
  if (memory.sourceId !== null) return;
  await tx.query(
    `DELETE FROM memory_entities WHERE tenant = $1 AND bank_id = $2 AND memory_id = $3 AND kind IN ('speaker', 'name')`,
    [tenant, bankId, memory.id],
  );
  await insertNames(tx, bank, tenant, bankId, [{ id: memory.id, mentions: mentionsOf(memory.text, memory.metadata) }]);
}

/** One entity of a bank, as stored: its name still sealed under encryption at rest. */
export interface EntityRow {
  key: string;
  name: string | null;
  name_enc: Uint8Array | null;
  kinds: EntityKind[];
  memory_count: number;
  first_seen: Date;
  last_seen: Date;
}

export interface EntityListFilter {
  tenant: string;
  bankId: string;
  space: string | undefined;
  /** A lowercased name prefix (plaintext banks only: an encrypted bank's keys are blind tokens). */
  prefix: string | undefined;
  /** The key of the previous page's last entity. */
  after: string | undefined;
  limit: number;
}

const likePrefix = (prefix: string): string => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The conditions on `memory_entities e JOIN memories m` every entity read shares: the bank, a space, visible memories. */
function scope(tenant: string, bankId: string, space: string | undefined): Sql[] {
  const where = [sql`e.tenant = ${tenant}`, sql`e.bank_id = ${bankId}`, sql`m.state = 'valid'`];
  if (space !== undefined) where.push(sql`m.space = ${space}`);
  return where;
}

const AGGREGATES = raw(`e.key, min(e.name) AS name, (array_agg(e.name_enc) FILTER (WHERE e.name_enc IS NOT NULL))[1]
  AS name_enc, array_agg(DISTINCT e.kind ORDER BY e.kind) AS kinds, count(DISTINCT e.memory_id)::int AS memory_count,
  min(${validFromSql('m.')}) AS first_seen, max(${validFromSql('m.')}) AS last_seen`);

/** A page of a bank's entities in key order, with how many there are in all. */
export async function listEntities(q: Queryable, f: EntityListFilter): Promise<{ rows: EntityRow[]; total: number }> {
  const where = scope(f.tenant, f.bankId, f.space);
  if (f.prefix !== undefined) where.push(sql`e.key LIKE ${likePrefix(f.prefix)}`);
  const [count] = await run<{ n: number }>(
    q,
    sql`SELECT count(DISTINCT e.key)::int AS n FROM memory_entities e JOIN memories m ON m.tenant = e.tenant AND m.id = e.memory_id
    WHERE ${join(where, ' AND ')}`,
  );
  if (f.after !== undefined) where.push(sql`e.key > ${f.after}`);
  const rows = await run<EntityRow>(
    q,
    sql`SELECT ${AGGREGATES} FROM memory_entities e JOIN memories m ON m.tenant = e.tenant AND m.id = e.memory_id
    WHERE ${join(where, ' AND ')} GROUP BY e.key ORDER BY e.key LIMIT ${f.limit}`,
  );
  return { rows, total: count?.n ?? 0 };
}

/** One entity by its key, or undefined when no visible memory names it. */
export async function getEntity(
  q: Queryable,
  tenant: string,
  bankId: string,
  space: string | undefined,
  key: string,
): Promise<EntityRow | undefined> {
  const where = [...scope(tenant, bankId, space), sql`e.key = ${key}`];
  const [row] = await run<EntityRow>(
    q,
    sql`SELECT ${AGGREGATES} FROM memory_entities e JOIN memories m ON m.tenant = e.tenant AND m.id = e.memory_id
    WHERE ${join(where, ' AND ')} GROUP BY e.key`,
  );
  return row;
}

/** The visible memories naming an entity, latest valid_from first, at most `limit`. */
export function memoriesNaming(
  q: Queryable,
  tenant: string,
  bankId: string,
  space: string | undefined,
  key: string,
  limit: number,
): Promise<MemoryRow[]> {
  const where = [...scope(tenant, bankId, space), sql`e.key = ${key}`];
  return run<MemoryRow>(
    q,
    sql`SELECT ${raw(MEMORY_COLUMNS)} FROM memories WHERE tenant = ${tenant} AND id IN (
      SELECT e.memory_id FROM memory_entities e JOIN memories m ON m.tenant = e.tenant AND m.id = e.memory_id WHERE ${join(where, ' AND ')})
    ORDER BY ${raw(validFromSql(''))} DESC, id LIMIT ${limit}`,
  );
}

/** Reads the stored names of entity rows (opening sealed ones): undefined where a sealed name fails to open. */
export function entityNames(
  q: Queryable,
  codec: BodyCodec,
  tenant: string,
  bankId: string,
  rows: readonly EntityRow[],
): Promise<Array<string | undefined>> {
  return codec.openEntityNames(q, tenant, bankId, rows);
}
