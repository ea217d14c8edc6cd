import { isStorableText, pointerSegment } from '@mnemos/http-input';
import { MEMORY_TYPES } from '../memory/types.js';
import { FIRST_STORABLE_TIME, ISO_DATE_EXAMPLE, isIsoDateText, isoDate, LAST_STORABLE_TIME } from '../util/iso-date.js';
import type {
  Condition,
  Filter,
  JsonScalar,
  JsonValue,
  MetadataCondition,
  TagsCondition,
  TextCondition,
  TextField,
  TimeCondition,
  TimeField,
} from './ast.js';

/**
 * The bounds of one filter. A filter becomes one SQL condition and one predicate run per candidate, so its size is
 * bounded: nesting and clauses enough for any scope an agent framework builds (user, agent, run, session, a date
 * range, a few tags), not enough for a filter to cost more than the recall it narrows.
 */
export const FILTER_LIMITS = {
  /** and/or/not nested within each other. */
  depth: 8,
  /** Logical nodes and operator tests together. */
  nodes: 100,
  /** Values of one `in`, `nin` or `contains` list. */
  listValues: 256,
  /** Keys of one metadata path (`metadata.a.b.c` has three). */
  pathKeys: 8,
  /** Characters of one metadata key (the wire's metadata keys are at most 256). */
  keyChars: 256,
  /** Characters of every string in the filter together (field names, keys, values). */
  textChars: 65_536,
  /** Nesting of a JSON value compared with `eq`/`ne` (an object or list inside the filter). */
  valueDepth: 8,
} as const;

/** A filter that cannot be read: `pointer` is the JSON pointer of the bad node, `detail` what is wrong there. */
export class FilterError extends Error {
  override readonly name = 'FilterError';

  constructor(
    readonly pointer: string,
    readonly detail: string,
  ) {
    super(`${pointer === '' ? '/' : pointer} ${detail}`);
  }
}

const FIELDS_TEXT = 'metadata.<key>, tags, type, timestamp, created_at, updated_at, expires_at, space, document_id';
const OPERATORS = ['eq', 'ne', 'in', 'nin', 'gt', 'gte', 'lt', 'lte', 'contains', 'exists'] as const;
type Operator = (typeof OPERATORS)[number];
const LOGICAL: Readonly<Record<string, 'and' | 'or' | 'not'>> = {
  and: 'and',
  or: 'or',
  not: 'not',
  AND: 'and',
  OR: 'or',
  NOT: 'not',
};
/** The years a stored time and a date the database reads back as written both cover. */
const TIME_FIELDS: readonly string[] = ['timestamp', 'created_at', 'updated_at', 'expires_at'] satisfies TimeField[];
const TEXT_FIELDS: readonly string[] = ['type', 'space', 'document_id'] satisfies TextField[];

/**
 * Reads a filter expression (the wire's JSON) into its tree. `at` is the JSON pointer of the filter in the request
 * (`/filter`), so errors point into the request. Throws FilterError for the first bad node.
 */
export function parseFilter(value: unknown, at = ''): Filter {
  return new FilterReader().node(value, at, 0);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const describe = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'an object' : typeof value;

/** One reading: counts nodes and characters against FILTER_LIMITS. */
class FilterReader {
  private nodes = 0;
  private chars = 0;

  node(value: unknown, at: string, depth: number): Filter {
    if (depth > FILTER_LIMITS.depth) {
      throw new FilterError(at, `nests and/or/not deeper than ${FILTER_LIMITS.depth} levels; flatten the expression`);
    }
    if (!isObject(value)) {
      throw new FilterError(
        at,
        `must be an object: a condition such as {"type": "world"} or {"and": [...]}, {"or": [...]}, {"not": {...}} (got ${describe(value)})`,
      );
    }
    const keys = Object.keys(value);
    if (keys.length === 0) throw new FilterError(at, `is empty; name a field (${FIELDS_TEXT}) or and/or/not`);
    const clauses = keys.map((key) => this.clause(key, value[key], `${at}/${pointerSegment(key)}`, depth));
    return clauses.length === 1 ? clauses[0]! : { op: 'and', all: clauses };
  }

  private count(at: string): void {
    if (++this.nodes > FILTER_LIMITS.nodes) {
      throw new FilterError(at, `makes the filter longer than ${FILTER_LIMITS.nodes} conditions and and/or/not nodes`);
    }
  }

  private text(value: string, at: string): string {
    this.chars += value.length;
    if (this.chars > FILTER_LIMITS.textChars) {
      throw new FilterError(at, `makes the filter's text longer than ${FILTER_LIMITS.textChars} characters`);
    }
    if (!isStorableText(value)) {
      throw new FilterError(at, 'contains a NUL character or a lone UTF-16 surrogate, which no memory can hold');
    }
    return value;
  }

  private clause(key: string, value: unknown, at: string, depth: number): Filter {
    this.text(key, at);
    const logical = LOGICAL[key];
    if (logical === 'not') {
      this.count(at);
      return { op: 'not', filter: this.node(value, at, depth + 1) };
    }
    if (logical !== undefined) {
      this.count(at);
      if (!Array.isArray(value) || value.length === 0) {
        throw new FilterError(at, `must be a non-empty list of expressions (got ${describe(value)})`);
      }
      const list = value.map((v, i) => this.node(v, `${at}/${i}`, depth + 1));
      return logical === 'and' ? { op: 'and', all: list } : { op: 'or', any: list };
    }
    return this.condition(key, value, at);
  }

  private condition(field: string, value: unknown, at: string): Filter {
    if ((OPERATORS as readonly string[]).includes(field)) {
      throw new FilterError(at, `is an operator; put it under a field, as in {"type": {"${field}": ...}}`);
    }
    // A bare value (not an object of operators) means eq.
    const tests: Array<[string, unknown, string]> = isObject(value)
      ? Object.entries(value).map(([op, v]) => [op, v, `${at}/${pointerSegment(op)}`])
      : [['eq', value, at]];
    if (tests.length === 0) throw new FilterError(at, `has no operator; use one of ${OPERATORS.join(', ')}`);
    const conditions = tests.map(([op, v, where]): Condition => {
      this.count(where);
      this.text(op, where);
      if (!(OPERATORS as readonly string[]).includes(op)) {
        throw new FilterError(
          where,
          `is not an operator; use one of ${OPERATORS.join(', ')} (to compare with an object, use {"eq": {...}})`,
        );
      }
      return this.test(field, op as Operator, v, where, at);
    });
    return conditions.length === 1 ? conditions[0]! : { op: 'and', all: conditions };
  }

  private test(field: string, op: Operator, value: unknown, at: string, fieldAt: string): Condition {
    if (field === 'metadata' || field === 'metadata.') {
      throw new FilterError(fieldAt, 'must name a key, as in metadata.project (metadata.a.b for nested objects)');
    }
    if (field.startsWith('metadata.')) return this.metadata(this.path(field.slice(9), fieldAt), op, value, at);
    if (field === 'tags') return this.tags(op, value, at);
    if (TEXT_FIELDS.includes(field)) return this.textField(field as TextField, op, value, at);
    if (TIME_FIELDS.includes(field)) return this.time(field as TimeField, op, value, at);
    throw new FilterError(fieldAt, `is not a field a filter can test; the fields are ${FIELDS_TEXT}`);
  }

  /** The keys of a metadata path: split at dots; `\.` is a dot inside a key and `\\` a backslash. */
  private path(text: string, at: string): string[] {
    const keys: string[] = [];
    let key = '';
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (c === '\\' && (text[i + 1] === '.' || text[i + 1] === '\\')) key += text[++i]!;
      else if (c === '.') {
        keys.push(key);
        key = '';
      } else key += c;
    }
    keys.push(key);
    if (keys.some((k) => k === ''))
      throw new FilterError(at, 'has an empty metadata key (two dots in a row, or a dot at the end)');
    if (keys.length > FILTER_LIMITS.pathKeys) {
      throw new FilterError(at, `names a metadata path of more than ${FILTER_LIMITS.pathKeys} keys`);
    }
    if (keys.some((k) => k.length > FILTER_LIMITS.keyChars)) {
      throw new FilterError(at, `names a metadata key longer than ${FILTER_LIMITS.keyChars} characters`);
    }
    return keys;
  }

  private metadata(path: string[], op: Operator, value: unknown, at: string): MetadataCondition {
    switch (op) {
      case 'eq':
      case 'ne':
        return { field: 'metadata', path, test: { op, value: this.json(value, at, 0) } };
      case 'in':
      case 'nin':
        return { field: 'metadata', path, test: { op, values: this.list(value, at, (v, i) => this.scalar(v, i)) } };
      case 'contains':
        return { field: 'metadata', path, test: { op, value: this.scalar(value, at) } };
      case 'exists':
        return { field: 'metadata', path, test: { op, value: this.boolean(value, at) } };
      default:
        if (typeof value === 'string') return { field: 'metadata', path, test: { op, value: this.text(value, at) } };
        if (typeof value === 'number' && Number.isFinite(value))
          return { field: 'metadata', path, test: { op, value } };
        throw new FilterError(at, `must be a number or a string to compare with (got ${describe(value)})`);
    }
  }

  private tags(op: Operator, value: unknown, at: string): TagsCondition {
    switch (op) {
      case 'eq':
      case 'ne':
        return { field: 'tags', test: { op, value: this.string(value, at, 'a tag (a string)') } };
      case 'in':
      case 'nin':
        return { field: 'tags', test: { op, values: this.list(value, at, (v, i) => this.string(v, i, 'a tag')) } };
      case 'contains':
        return {
          field: 'tags',
          test: {
            op,
            values: Array.isArray(value)
              ? this.list(value, at, (v, i) => this.string(v, i, 'a tag'))
              : [this.string(value, at, 'a tag or a list of tags')],
          },
        };
      case 'exists':
        return { field: 'tags', test: { op, value: this.boolean(value, at) } };
      default:
        throw new FilterError(
          at,
          'is not an operator tags take: tags have no order; use eq, ne, in, nin, contains or exists',
        );
    }
  }

  private textField(field: TextField, op: Operator, value: unknown, at: string): TextCondition {
    const name = (v: unknown, where: string): string => {
      const s = this.string(v, where, field === 'type' ? 'a memory type' : 'a string');
      if (field === 'type' && (op === 'eq' || op === 'ne' || op === 'in' || op === 'nin')) {
        if (!(MEMORY_TYPES as readonly string[]).includes(s)) {
          throw new FilterError(where, `is not a memory type; the types are ${MEMORY_TYPES.join(', ')}`);
        }
      }
      return s;
    };
    switch (op) {
      case 'eq':
      case 'ne':
        if (value === null) {
          if (field !== 'document_id') throw new FilterError(at, `cannot be null: every memory has a ${field}`);
          return { field, test: { op, value: null } };
        }
        return { field, test: { op, value: name(value, at) } };
      case 'in':
      case 'nin':
        return { field, test: { op, values: this.list(value, at, name) } };
      case 'exists':
        return { field, test: { op, value: this.boolean(value, at) } };
      default:
        return { field, test: { op, value: name(value, at) } };
    }
  }

  private time(field: TimeField, op: Operator, value: unknown, at: string): TimeCondition {
    switch (op) {
      case 'in':
      case 'nin':
        return { field, test: { op, values: this.list(value, at, (v, i) => this.date(v, i)) } };
      case 'exists':
        return { field, test: { op, value: this.boolean(value, at) } };
      case 'contains':
        throw new FilterError(at, `is not an operator ${field} takes: compare dates with eq, gt, gte, lt or lte`);
      default:
        return { field, test: { op, value: this.date(value, at) } };
    }
  }

  private date(value: unknown, at: string): number {
    const text = typeof value === 'string' ? this.text(value, at).trim() : undefined;
    const time = text !== undefined && isIsoDateText(text) ? isoDate(text).getTime() : NaN;
    if (Number.isNaN(time)) {
      throw new FilterError(
        at,
        `must be an RFC 3339 date-time such as ${ISO_DATE_EXAMPLE} or a date such as 2024-01-15 (got ${text === undefined ? describe(value) : JSON.stringify(text.slice(0, 40))})`,
      );
    }
    if (time < FIRST_STORABLE_TIME || time > LAST_STORABLE_TIME) {
      throw new FilterError(at, 'must lie between 0001-01-01 and 9999-12-31 (UTC)');
    }
    return time;
  }

  private list<T>(value: unknown, at: string, item: (v: unknown, at: string) => T): T[] {
    if (!Array.isArray(value) || value.length === 0) {
      throw new FilterError(at, `must be a non-empty list (got ${describe(value)})`);
    }
    if (value.length > FILTER_LIMITS.listValues) {
      throw new FilterError(at, `lists more than ${FILTER_LIMITS.listValues} values`);
    }
    return value.map((v, i) => item(v, `${at}/${i}`));
  }

  private string(value: unknown, at: string, what: string): string {
    if (typeof value !== 'string') throw new FilterError(at, `must be ${what} (got ${describe(value)})`);
    return this.text(value, at);
  }

  private boolean(value: unknown, at: string): boolean {
    if (typeof value !== 'boolean') throw new FilterError(at, `must be true or false (got ${describe(value)})`);
    return value;
  }

  private scalar(value: unknown, at: string): JsonScalar {
    if (typeof value === 'string') return this.text(value, at);
    if (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) return value;
    throw new FilterError(at, `must be a string, a number or a boolean (got ${describe(value)})`);
  }

  /** A JSON value to compare with; its nesting and text count against the limits. */
  private json(value: unknown, at: string, depth: number): JsonValue {
    if (value === null || typeof value === 'boolean') return value;
    if (typeof value === 'string') return this.text(value, at);
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) throw new FilterError(at, 'must be a finite number');
      return value;
    }
    if (depth >= FILTER_LIMITS.valueDepth) {
      throw new FilterError(at, `nests a value deeper than ${FILTER_LIMITS.valueDepth} levels`);
    }
    if (Array.isArray(value)) return value.map((v, i) => this.json(v, `${at}/${i}`, depth + 1));
    if (isObject(value)) {
      // fromEntries defines own properties, so a key such as __proto__ stays a key.
      return Object.fromEntries(
        Object.entries(value).map(([k, v]) => {
          const where = `${at}/${pointerSegment(k)}`;
          return [this.text(k, where), this.json(v, where, depth + 1)];
        }),
      );
    }
    throw new FilterError(at, `must be a JSON value (got ${describe(value)})`);
  }
}
