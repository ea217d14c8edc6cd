/**
 * The filter language as a typed tree (parse.ts builds it from the wire JSON; evaluate.ts and sql.ts read it). Each
 * condition is typed by the kind of its field, so an evaluator never meets an operator its field does not take.
 */

import type { JsonValue } from '../memory/types.js';

export type { JsonValue };

/** What `in`, `nin` and `contains` take for metadata: one JSON scalar (not null). */
export type JsonScalar = string | number | boolean;

export type Comparison = 'gt' | 'gte' | 'lt' | 'lte';

/** A condition on `metadata.<path>`: the value at the path (absent when a key is missing or the value is null). */
export interface MetadataCondition {
  field: 'metadata';
  /** Object keys from the top of the metadata down; a path never indexes into an array. */
  path: readonly string[];
  test:
    | { op: 'eq' | 'ne'; value: JsonValue }
    | { op: 'in' | 'nin'; values: readonly JsonScalar[] }
    | { op: Comparison; value: number | string }
    | { op: 'contains'; value: JsonScalar }
    | { op: 'exists'; value: boolean };
}

/** A condition on the memory's tags (a list of strings). */
export interface TagsCondition {
  field: 'tags';
  test:
    | { op: 'eq' | 'ne'; value: string }
    | { op: 'in' | 'nin'; values: readonly string[] }
    /** Every one of `values` is among the tags. */
    | { op: 'contains'; values: readonly string[] }
    | { op: 'exists'; value: boolean };
}

export type TextField = 'type' | 'space' | 'document_id';

/** A condition on a text column (`document_id` may be absent; `type` and `space` never are). */
export interface TextCondition {
  field: TextField;
  test:
    | { op: 'eq' | 'ne'; value: string | null }
    | { op: 'in' | 'nin'; values: readonly string[] }
    | { op: Comparison; value: string }
    | { op: 'contains'; value: string }
    | { op: 'exists'; value: boolean };
}

/**
 * `timestamp` is when the memory happened: its occurred_at, else when it was stored (created_at). `expires_at` is the
 * one a memory may lack (it is kept): absent, as a missing metadata key is.
 */
export type TimeField = 'timestamp' | 'created_at' | 'updated_at' | 'expires_at';

/** A condition on a time, in epoch milliseconds; a stored time compares by its millisecond (sub-millisecond cut). */
export interface TimeCondition {
  field: TimeField;
  test:
    | { op: 'eq' | 'ne'; value: number }
    | { op: Comparison; value: number }
    | { op: 'in' | 'nin'; values: readonly number[] }
    | { op: 'exists'; value: boolean };
}

export type Condition = MetadataCondition | TagsCondition | TextCondition | TimeCondition;

export type Filter =
  | { op: 'and'; all: readonly Filter[] }
  | { op: 'or'; any: readonly Filter[] }
  | { op: 'not'; filter: Filter }
  | Condition;

/** The fields a filter reads: a tier that does not hold one of them cannot evaluate the filter in memory. */
export function fieldsOf(filter: Filter, into = new Set<Condition['field']>()): Set<Condition['field']> {
  if ('field' in filter) into.add(filter.field);
  else if (filter.op === 'and') for (const f of filter.all) fieldsOf(f, into);
  else if (filter.op === 'or') for (const f of filter.any) fieldsOf(f, into);
  else fieldsOf(filter.filter, into);
  return into;
}
