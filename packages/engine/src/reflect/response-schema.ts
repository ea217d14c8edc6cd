import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import { RE2JS } from 're2js';
import { invalidField as invalid } from '@mnemos/problems';

/**
 * A caller's response_schema, compiled so that checking the LLM's answer against it has a bound: its `pattern` and
 * `patternProperties` run on RE2 (re2js: linear time in the input, no backtracking), and the schema's size and depth
 * and the answer's size are capped. Patterns RE2 cannot run (backreferences, lookaround) are refused at request time.
 */

const MAX_SCHEMA_CHARS = 100_000;
const MAX_SCHEMA_DEPTH = 32;
/** The structured answer checked against the schema, as JSON characters at most. */
export const MAX_ANSWER_CHARS = 65_536;

/** Ajv's regular-expression engine: RE2 instead of the backtracking RegExp. */
const re2: RegExpEngine = Object.assign((pattern: string) => RE2JS.compile(pattern), { code: 're2js' });

const require = createRequire(import.meta.url);
const addFormats = require('ajv-formats') as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ strict: false, allErrors: false, code: { regExp: re2 } }));

/** Keywords whose values are data, not schemas: nothing under them is a pattern. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function checkPattern(pattern: string, pointer: string): void {
  try {
    RE2JS.compile(pattern);
  } catch (error) {
    throw invalid(
      pointer,
      `is a pattern that needs backtracking or is not valid (${(error as Error).message.slice(0, 200)}); patterns run on ` +
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
  try {
    return ajv.compile(schema);
  } catch (error) {
    throw invalid('/response_schema', `is not a usable JSON Schema (${(error as Error).message.slice(0, 300)})`);
  }
}

/** Why `value` does not satisfy the compiled schema, or undefined when it does. */
export function answerMismatch(validate: ValidateFunction, value: unknown): string | undefined {
  const size = JSON.stringify(value ?? null).length;
  if (size > MAX_ANSWER_CHARS) return `it is ${size} characters of JSON, more than the ${MAX_ANSWER_CHARS} allowed`;
  return validate(value) ? undefined : ajv.errorsText(validate.errors).slice(0, 300);
}

/** Client schemas are compiled per call; dropping them keeps the validator's cache from growing. */
export function forgetResponseSchema(schema: Record<string, unknown>): void {
  ajv.removeSchema(schema);
}
