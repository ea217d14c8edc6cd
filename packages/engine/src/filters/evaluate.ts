import type {
  Comparison,
  Filter,
  JsonScalar,
  JsonValue,
  MetadataCondition,
  TextCondition,
  TimeCondition,
} from './ast.js';

/**
 * What the in-memory evaluator reads of a memory, whatever a tier keeps per memory (an object, a row number into
 * columns). Times are epoch milliseconds; a fraction (the database's microseconds) is allowed and is cut, as the SQL
 * side cuts it.
 */
export interface FilterAccessor<Row> {
  type(row: Row): string;
  space(row: Row): string;
  documentId(row: Row): string | null;
  tags(row: Row): readonly string[];
  occurredAt(row: Row): number | null;
  createdAt(row: Row): number;
  updatedAt(row: Row): number;
  /** null when the memory is kept (it has no expiry). */
  expiresAt(row: Row): number | null;
  /** The memory's metadata, opened (decrypted) when bodies are encrypted. */
  metadata(row: Row): Readonly<Record<string, JsonValue>>;
}

type Predicate<Row> = (row: Row) => boolean;

/**
 * The filter as a predicate over rows, built once per request: it answers exactly what the SQL fragment of sql.ts
 * selects (the two are tested against each other on a real database).
 */
export function filterPredicate<Row>(filter: Filter, read: FilterAccessor<Row>): Predicate<Row> {
  if ('field' in filter) {
    switch (filter.field) {
      case 'metadata':
        return metadataPredicate(filter, read);
      case 'tags':
        return tagsPredicate(filter.test, read);
      case 'type':
      case 'space':
      case 'document_id':
        return valuePredicate(filter.test, textReader(filter.field, read), compareCodePoints);
      case 'timestamp':
      case 'created_at':
      case 'updated_at':
      case 'expires_at':
        return valuePredicate(filter.test, timeReader(filter.field, read), (a, b) => a - b);
    }
  }
  switch (filter.op) {
    case 'and': {
      const all = filter.all.map((f) => filterPredicate(f, read));
      return (row) => all.every((p) => p(row));
    }
    case 'or': {
      const any = filter.any.map((f) => filterPredicate(f, read));
      return (row) => any.some((p) => p(row));
    }
    case 'not': {
      const inner = filterPredicate(filter.filter, read);
      return (row) => !inner(row);
    }
  }
}

/**
 * Compares by Unicode code points, as PostgreSQL's "C" collation orders UTF-8 text (JavaScript's `<` compares UTF-16
 * code units, which puts U+E000..U+FFFF after the characters beyond U+FFFF).
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** A UTF-16 unit's place in code point order: surrogates (halves of U+10000 and beyond) move above U+FFFF. */
const codePointRank = (unit: number): number => (unit < 0xd800 ? unit : unit < 0xe000 ? unit + 0x2000 : unit - 0x800);

function ordered(op: Comparison, order: number): boolean {
  switch (op) {
    case 'gt':
      return order > 0;
    case 'gte':
      return order >= 0;
    case 'lt':
      return order < 0;
    case 'lte':
      return order <= 0;
  }
}

/** The value at `path` in `metadata`; undefined when a key is missing, a step is not an object, or the value is null. */
function valueAt(metadata: Readonly<Record<string, JsonValue>>, path: readonly string[]): JsonValue | undefined {
  let value: JsonValue | undefined = metadata;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, key)) {
      return undefined;
    }
    value = value[key];
  }
  return value === null ? undefined : value;
}

/** JSON equality: numbers by value, objects by their keys whatever the order, lists in order. */
function jsonEqual(a: JsonValue, b: JsonValue): boolean {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]!));
  }
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k]!, b[k]!));
}

function metadataPredicate<Row>(c: MetadataCondition, read: FilterAccessor<Row>): Predicate<Row> {
  const at = (row: Row) => valueAt(read.metadata(row), c.path);
  const t = c.test;
  switch (t.op) {
    case 'eq':
    case 'ne': {
      const want = t.value;
      const eq =
        want === null
          ? (row: Row) => at(row) === undefined
          : typeof want !== 'object'
            ? (row: Row) => at(row) === want
            : (row: Row) => isEqual(at(row), want);
      return t.op === 'eq' ? eq : (row) => !eq(row);
    }
    case 'in':
    case 'nin': {
      const values = t.values;
      const found = (row: Row) => {
        const v = at(row);
        return values.some((x) => v === x);
      };
      return t.op === 'in' ? found : (row) => !found(row);
    }
    case 'contains': {
      const want: JsonScalar = t.value;
      return (row) => {
        const v = at(row);
        if (typeof v === 'string') return typeof want === 'string' && v.includes(want);
        return Array.isArray(v) && v.some((x) => x === want);
      };
    }
    case 'exists': {
      const want = t.value;
      return (row) => (at(row) !== undefined) === want;
    }
    default: {
      const { op, value } = t;
      return typeof value === 'number'
        ? (row) => {
            const v = at(row);
            return typeof v === 'number' && ordered(op, v - value);
          }
        : (row) => {
            const v = at(row);
            return typeof v === 'string' && ordered(op, compareCodePoints(v, value));
          };
    }
  }
}

const isEqual = (value: JsonValue | undefined, want: JsonValue): boolean =>
  value !== undefined && jsonEqual(value, want);

function tagsPredicate<Row>(t: Extract<Filter, { field: 'tags' }>['test'], read: FilterAccessor<Row>): Predicate<Row> {
  switch (t.op) {
    case 'eq':
      return (row) => read.tags(row).includes(t.value);
    case 'ne':
      return (row) => !read.tags(row).includes(t.value);
    case 'in':
      return (row) => t.values.some((x) => read.tags(row).includes(x));
    case 'nin':
      return (row) => !t.values.some((x) => read.tags(row).includes(x));
    case 'contains':
      return (row) => t.values.every((x) => read.tags(row).includes(x));
    case 'exists':
      return (row) => read.tags(row).length > 0 === t.value;
  }
}

function textReader<Row>(field: TextCondition['field'], read: FilterAccessor<Row>): (row: Row) => string | null {
  switch (field) {
    case 'type':
      return (row) => read.type(row);
    case 'space':
      return (row) => read.space(row);
    case 'document_id':
      return (row) => read.documentId(row);
  }
}

/** The field's time cut to its millisecond (null: the memory has none). */
function timeReader<Row>(field: TimeCondition['field'], read: FilterAccessor<Row>): (row: Row) => number | null {
  switch (field) {
    case 'timestamp':
      return (row) => Math.floor(read.occurredAt(row) ?? read.createdAt(row));
    case 'created_at':
      return (row) => Math.floor(read.createdAt(row));
    case 'updated_at':
      return (row) => Math.floor(read.updatedAt(row));
    case 'expires_at':
      return (row) => {
        const at = read.expiresAt(row);
        return at === null ? null : Math.floor(at);
      };
  }
}

/** A test on a text or a time, as the text and time conditions hold it. */
type ValueTest<Value> =
  | { op: 'eq' | 'ne'; value: Value | null }
  | { op: 'in' | 'nin'; values: readonly Value[] }
  | { op: Comparison; value: Value }
  | { op: 'contains'; value: string }
  | { op: 'exists'; value: boolean };

/**
 * A test on a value read by `at` (null when the memory has none: it equals only null, is in no list and has no
 * order), ordered by `order`.
 */
function valuePredicate<Row, Value extends string | number>(
  t: ValueTest<Value>,
  at: (row: Row) => Value | null,
  order: (a: Value, b: Value) => number,
): Predicate<Row> {
  switch (t.op) {
    case 'eq':
      return (row) => at(row) === t.value;
    case 'ne':
      return (row) => at(row) !== t.value;
    case 'in':
    case 'nin': {
      const values = new Set<Value | null>(t.values);
      return t.op === 'in' ? (row) => values.has(at(row)) : (row) => !values.has(at(row));
    }
    case 'contains':
      return (row) => {
        const v = at(row);
        return typeof v === 'string' && v.includes(t.value);
      };
    case 'exists':
      return (row) => (at(row) !== null) === t.value;
    default: {
      const { op, value } = t;
      return (row) => {
        const v = at(row);
        return v !== null && ordered(op, order(v, value));
      };
    }
  }
}
