// Request validation: bodies are validated strictly (no type coercion: `{"content": 42}` is an error, not "42");
// query strings and path parameters coerce, since they arrive as text.
import { Ajv, type ValidateFunction } from 'ajv';
import formats from 'ajv-formats';
import type { FastifySchema } from 'fastify';

type AddFormats = (ajv: Ajv) => Ajv;
const addFormats: AddFormats =
  (formats as unknown as { default?: AddFormats }).default ?? (formats as unknown as AddFormats);

function makeAjv(coerce: boolean): Ajv {
  // verbose: errors carry their schema, so integer bounds can be named in full (describeIssue).
  const ajv = new Ajv({
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: true,
    strict: false,
    verbose: true,
  });
  addFormats(ajv);
  return ajv;
}

const strict = makeAjv(false);
const lenient = makeAjv(true);

export function validatorCompiler({
  schema,
  httpPart,
}: {
  schema: FastifySchema;
  httpPart?: string;
}): ValidateFunction {
  return (httpPart === 'body' ? strict : lenient).compile(schema);
}
