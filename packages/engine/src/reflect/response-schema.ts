import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import { RE2JS } from 're2js';
import { invalidField as invalid } from '@mnemos/problems';
import { checkSchemaGraph, MAX_ANSWER_DEPTH } from './schema-graph.js';
import { errorMessage } from '../util/error-message.js';

/**
 * A caller's response_schema, compiled so that checking the LLM's answer against it has a bound: its `pattern` and
 * `patternProperties` run on RE2 (re2js: linear time in the input, no backtracking), `uniqueItems` in linear time,
 * the schema's size, depth and shape (schema-graph.ts: local references that descend, a bounded count of subschemas
 * and of steps per answer) and the answer's size and depth are capped. Patterns RE2 cannot run (backreferences,
 * lookaround) and shapes over a bound are refused at request time with a 400 naming where.
 */

const MAX_SCHEMA_CHARS = 100_000;
const MAX_SCHEMA_DEPTH = 32;
/** The structured answer checked against the schema, as JSON characters at most. */
export const MAX_ANSWER_CHARS = 65_536;

/** Ajv's regular-expression engine: RE2 instead of the backtracking RegExp. */
const re2: RegExpEngine = Object.assign((pattern: string) => RE2JS.compile(pattern), { code: 're2js' });

const require = createRequire(import.meta.url);
const addFormats = require('ajv-formats') as (ajv: Ajv) => Ajv;
// The generated code stays about as large as the schema: enum and required lists of more than a few values are looped
// over instead of unrolled, a referenced subschema is one function called from each place rather than copied into
// each, the code is not optimised (a pass that costs more than it saves on code run once), and a schema that fails
// to compile is not printed to the log. The check stops at the first error: collecting every error of an answer
// that fails in many places would cost more than the checks themselves.
const ajv = addFormats(
  new Ajv({
    strict: false,
    allErrors: false,
    loopEnum: 16,
    loopRequired: 16,
    inlineRefs: false,
    logger: false,
    code: { regExp: re2, optimize: false },
  }),
);
// Ajv compares every pair of items for uniqueItems unless the items are declared scalars; comparing their canonical
// JSON keeps it linear in the answer's size.
ajv.removeKeyword('uniqueItems');
ajv.addKeyword({
  keyword: 'uniqueItems',
  type: 'array',
  schemaType: 'boolean',
  errors: false,
  validate: (unique: boolean, items: unknown[]) => !unique || new Set(items.map(canonicalJson)).size === items.length,
});

/** JSON with object keys sorted, so that values equal under JSON Schema have the same text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Keywords whose values are data, not schemas: nothing under them is a pattern. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Longest pattern accepted: compiling a pattern takes time in its length, and a long one is costly to run. */
const MAX_PATTERN_CHARS = 1_000;

function checkPattern(pattern: string, pointer: string): void {
  if (pattern.length > MAX_PATTERN_CHARS) {
    throw invalid(pointer, `is a pattern longer than ${MAX_PATTERN_CHARS.toLocaleString('en')} characters; shorten it`);
  }
  try {
    RE2JS.compile(pattern);
  } catch (error) {
    throw invalid(
      pointer,
      `is a pattern that needs backtracking or is not valid (${errorMessage(error).slice(0, 200)}); patterns run on ` +
        'a linear-time engine (RE2), which has no backreferences or lookaround: rewrite it without them',
    );
  }
}

/** Refuses a schema that is too deep or holds a pattern RE2 cannot run, naming where. */
function checkNode(node: unknown, pointer: string, depth: number): void {
  if (typeof node !== 'object' || node === null) return;
  if (depth > MAX_SCHEMA_DEPTH)
    throw invalid(pointer, `nests deeper than ${MAX_SCHEMA_DEPTH} levels; flatten the schema`);
  for (const [key, value] of Object.entries(node)) {
    const at = `${pointer}/${escapePointer(key)}`;
    if (!Array.isArray(node) && DATA_KEYWORDS.has(key)) continue;
    if (key === 'pattern' && typeof value === 'string' && !Array.isArray(node)) checkPattern(value, at);
    if (key === 'patternProperties' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      for (const pattern of Object.keys(value as object)) checkPattern(pattern, `${at}/${escapePointer(pattern)}`);
    }
    checkNode(value, at, depth + 1);
  }
}

/** Compiles a client's response_schema, or answers 400 saying why it is not usable. */
export function compileResponseSchema(schema: Record<string, unknown>): ValidateFunction {
  if (JSON.stringify(schema).length > MAX_SCHEMA_CHARS) {
    throw invalid(
      '/response_schema',
      `is larger than ${MAX_SCHEMA_CHARS.toLocaleString('en')} characters; send a smaller schema`,
    );
  }
  checkNode(schema, '/response_schema', 1);
  checkSchemaGraph(schema, '/response_schema', MAX_ANSWER_CHARS);
  try {
    return ajv.compile(schema);
  } catch (error) {
    throw invalid('/response_schema', `is not a usable JSON Schema (${errorMessage(error).slice(0, 300)})`);
  }
}

/** How deep `value` nests (a scalar is 0), counted no further than `limit + 1`, without recursion. */
function nesting(value: unknown, limit: number): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length > 0) {
    const [v, depth] = pending.pop()!;
    deepest = Math.max(deepest, depth);
    if (deepest > limit) return deepest;
    if (typeof v === 'object' && v !== null) for (const member of Object.values(v)) pending.push([member, depth + 1]);
  }
  return deepest;
}

/** Why `value` does not satisfy the compiled schema, or undefined when it does. */
export function answerMismatch(validate: ValidateFunction, value: unknown): string | undefined {
  if (nesting(value, MAX_ANSWER_DEPTH) > MAX_ANSWER_DEPTH) return `it nests deeper than ${MAX_ANSWER_DEPTH} levels`;
  const size = JSON.stringify(value ?? null).length;
  if (size > MAX_ANSWER_CHARS) return `it is ${size} characters of JSON, more than the ${MAX_ANSWER_CHARS} allowed`;
  return validate(value) ? undefined : ajv.errorsText(validate.errors).slice(0, 300);
}

/** Client schemas are compiled per call; dropping them keeps the validator's cache from growing. */
export function forgetResponseSchema(schema: Record<string, unknown>): void {
  ajv.removeSchema(schema);
}
