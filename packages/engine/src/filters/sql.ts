import sql, { join, raw, type Sql } from 'sql-template-tag';
import type { SqlParam } from '../db/database.js';
import type { Comparison, Filter, MetadataCondition, TagsCondition, TextCondition, TimeCondition } from './ast.js';

/**
 * A filter as a WHERE condition over the `memories` table (PostgreSQL and PGlite alike), every value a parameter. It
 * selects exactly the rows filterPredicate (evaluate.ts) passes: every part is true or false, never NULL, so `not`
 * inverts it as the predicate does. Metadata is read from the plaintext `metadata` column: with encryption at rest that
 * column is empty (docs/decisions.md, "Filters and encryption at rest").
 *
 * `table` qualifies the columns when the query names the table (`memories m` gives `m`).
 */
export function filterSql(filter: Filter, table?: string): Sql {
  if (table !== undefined && !/^[a-z_][a-z0-9_]*$/.test(table)) throw new Error(`not a table alias: ${table}`);
  return node(filter, (name) => raw(table === undefined ? name : `${table}.${name}`));
}

/**
 * The fragment's text for a statement written with numbered placeholders: its values are appended to `params`, and
 * its placeholders numbered after those already there.
 */
export function appendParams(fragment: Sql, params: SqlParam[]): string {
  return fragment.strings.reduce((text, part, i) => {
    params.push(fragment.values[i - 1] as SqlParam);
    return `${text}$${params.length}${part}`;
  });
}

type Column = (name: string) => Sql;

function node(filter: Filter, column: Column): Sql {
  if ('field' in filter) {
    switch (filter.field) {
      case 'metadata':
        return metadataSql(filter, column);
      case 'tags':
        return tagsSql(filter.test, column('tags'));
      case 'type':
      case 'space':
      case 'document_id':
        return textSql(filter.test, column(filter.field));
      case 'timestamp':
        return timeSql(filter.test, sql`COALESCE(${column('occurred_at')}, ${column('created_at')})`);
      case 'created_at':
      case 'updated_at':
        return timeSql(filter.test, column(filter.field));
      case 'expires_at':
        return absentTimeSql(filter.test, column(filter.field));
    }
  }
  switch (filter.op) {
    case 'and':
      return sql`(${join(
        filter.all.map((f) => node(f, column)),
        ' AND ',
      )})`;
    case 'or':
      return sql`(${join(
        filter.any.map((f) => node(f, column)),
        ' OR ',
      )})`;
    case 'not':
      return sql`(NOT ${node(filter.filter, column)})`;
  }
}

const OPERATOR: Readonly<Record<Comparison, Sql>> = { gt: raw('>'), gte: raw('>='), lt: raw('<'), lte: raw('<=') };

const not = (condition: Sql): Sql => sql`(NOT ${condition})`;

/** Values as a text[] parameter cast to jsonb[] (a text[] binds the same way on both drivers). */
const jsonArray = (values: readonly unknown[]): Sql => sql`${values.map((v) => JSON.stringify(v))}::text[]::jsonb[]`;

function metadataSql(c: MetadataCondition, column: Column): Sql {
  // `->` with a text key answers NULL on a list or a scalar: a path never indexes into a list, as in evaluate.ts.
  const v = c.path.reduce((expr, key) => sql`${expr} -> ${key}::text`, sql`${column('metadata')}`);
  const t = c.test;
  switch (t.op) {
    case 'eq':
    case 'ne': {
      const eq =
        t.value === null
          ? sql`(${v} IS NULL OR ${v} = 'null'::jsonb)`
          : sql`COALESCE(${v} = ${JSON.stringify(t.value)}::text::jsonb, false)`;
      return t.op === 'eq' ? eq : not(eq);
    }
    case 'in':
    case 'nin': {
      const found = sql`COALESCE(${v} = ANY(${jsonArray(t.values)}), false)`;
      return t.op === 'in' ? found : not(found);
    }
    case 'contains': {
      const element = sql`${v} @> ${JSON.stringify([t.value])}::text::jsonb`;
      return typeof t.value === 'string'
        ? sql`(CASE jsonb_typeof(${v}) WHEN 'string' THEN strpos(${v} #>> '{}', ${t.value}::text) > 0
            WHEN 'array' THEN ${element} ELSE false END)`
        : sql`(CASE jsonb_typeof(${v}) WHEN 'array' THEN ${element} ELSE false END)`;
    }
    case 'exists': {
      const present = sql`(${v} IS NOT NULL AND ${v} <> 'null'::jsonb)`;
      return t.value ? present : not(present);
    }
    default:
      // CASE, not AND: the cast must not run on a value of another type (the database may order AND's sides freely).
      return typeof t.value === 'number'
        ? sql`(CASE WHEN jsonb_typeof(${v}) = 'number' THEN (${v})::float8 ${OPERATOR[t.op]} ${t.value}::float8
            ELSE false END)`
        : sql`(CASE WHEN jsonb_typeof(${v}) = 'string' THEN (${v} #>> '{}') COLLATE "C" ${OPERATOR[t.op]} ${t.value}::text
            ELSE false END)`;
  }
}

function tagsSql(t: TagsCondition['test'], tags: Sql): Sql {
  switch (t.op) {
    case 'eq':
      return sql`(${tags} @> ARRAY[${t.value}::text])`;
    case 'ne':
      return not(sql`${tags} @> ARRAY[${t.value}::text]`);
    case 'in':
      return sql`(${tags} && ${[...t.values]}::text[])`;
    case 'nin':
      return not(sql`${tags} && ${[...t.values]}::text[]`);
    case 'contains':
      return sql`(${tags} @> ${[...t.values]}::text[])`;
    case 'exists':
      return t.value ? sql`(cardinality(${tags}) > 0)` : sql`(cardinality(${tags}) = 0)`;
  }
}

function textSql(t: TextCondition['test'], column: Sql): Sql {
  switch (t.op) {
    case 'eq':
    case 'ne': {
      if (t.value === null) return t.op === 'eq' ? sql`(${column} IS NULL)` : sql`(${column} IS NOT NULL)`;
      const eq = sql`COALESCE(${column} = ${t.value}::text, false)`;
      return t.op === 'eq' ? eq : not(eq);
    }
    case 'in':
    case 'nin': {
      const found = sql`COALESCE(${column} = ANY(${[...t.values]}::text[]), false)`;
      return t.op === 'in' ? found : not(found);
    }
    case 'contains':
      return sql`COALESCE(strpos(${column}, ${t.value}::text) > 0, false)`;
    case 'exists':
      return t.value ? sql`(${column} IS NOT NULL)` : sql`(${column} IS NULL)`;
    default:
      return sql`COALESCE(${column} COLLATE "C" ${OPERATOR[t.op]} ${t.value}::text, false)`;
  }
}

/**
 * A time a memory may lack (NULL): absent, it equals no time, is in no list and has no order, so `ne` and `nin` pass
 * it and the rest do not; `exists` asks whether it has one. Never NULL, like every part.
 */
function absentTimeSql(t: TimeCondition['test'], time: Sql): Sql {
  switch (t.op) {
    case 'exists':
      return t.value ? sql`(${time} IS NOT NULL)` : sql`(${time} IS NULL)`;
    case 'ne':
    case 'nin':
      return sql`(${time} IS NULL OR ${timeSql(t, time)})`;
    default:
      return sql`(${time} IS NOT NULL AND ${timeSql(t, time)})`;
  }
}

/**
 * A stored time compares by its millisecond (as the predicate reads it), written as ranges over the column itself so
 * an index on it still serves: "its millisecond is after d" is "it is at or after d + 1 ms".
 */
function timeSql(t: TimeCondition['test'], time: Sql): Sql {
  const at = (ms: number) => sql`${new Date(ms).toISOString()}::timestamptz`;
  const after = (ms: number) => sql`(${at(ms)} + interval '1 millisecond')`;
  const within = (ms: number) => sql`(${time} >= ${at(ms)} AND ${time} < ${after(ms)})`;
  switch (t.op) {
    case 'eq':
      return within(t.value);
    case 'ne':
      return not(within(t.value));
    case 'in':
    case 'nin': {
      const found = sql`(${join(t.values.map(within), ' OR ')})`;
      return t.op === 'in' ? found : not(found);
    }
    case 'exists':
      return t.value ? sql`true` : sql`false`;
    case 'gt':
      return sql`(${time} >= ${after(t.value)})`;
    case 'gte':
      return sql`(${time} >= ${at(t.value)})`;
    case 'lt':
      return sql`(${time} < ${at(t.value)})`;
    case 'lte':
      return sql`(${time} < ${after(t.value)})`;
  }
}
